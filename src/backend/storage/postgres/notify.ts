/**
 * Cross-instance wake-ups over PostgreSQL LISTEN/NOTIFY. The commit log is the record
 * (`commit-log.ts`); a notification only tells the other instances sooner that commit `seq`
 * happened, with its write set when it fits, so they need not read the log for it.
 *
 * A message is `<origin>:<seq>:<payload>`, the payload `*` when it does not fit NOTIFY's limit
 * (8000 bytes). An instance ignores its own messages. The LISTEN connection is checked with a
 * heartbeat: a connection that does not answer in time (half-open, a stalled proxy) is dropped
 * and replaced, with backoff; after every (re)connect the follower catches up from the log,
 * because notifications sent meanwhile are lost.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { backoffDelayMs } from "../../../protocol/backoff.ts";
import { logger } from "../../logger.ts";
import { RETRY_POLICIES } from "../../retry/policies.ts";
import { type Ticking, tick } from "../../ticker.ts";

/** Payload marker of a commit whose write set the message does not carry. */
export const UNCARRIED = "*";
/** NOTIFY rejects payloads of 8000 bytes or more. */
const MAX_PAYLOAD_BYTES = 7999;
/**
 * Messages sent in one statement at most (each up to {@link MAX_PAYLOAD_BYTES}). A full statement
 * is followed at once by the next, not after {@link MIN_STATEMENT_INTERVAL_MS}: the interval
 * would otherwise cap what one instance announces (at 64 a statement it was 3,200 commits a
 * second, which one instance reached on this machine: its hints fell behind and the other
 * instances read from a quarter to all of its commits back from the log, issue 48).
 */
export const MAX_BATCH = 256;
/**
 * Messages waiting at most. Beyond this a commit is not announced (and the drop logged once per
 * streak): the others find it in the log, at the cost of a read, and memory stays bounded while
 * statements cannot go out as fast as commits are made.
 */
export const MAX_OUTBOX = 16 * MAX_BATCH;
/**
 * After a statement that carried several messages, but fewer than {@link MAX_BATCH}, the next goes
 * out no sooner than this: the commits of the interval share it, since every statement wakes every
 * instance's LISTEN connection, the sender's own included. After a statement of one message the
 * next goes at once, so commits made one after another (a client waiting for each update) are not
 * delayed, and neither is an idle instance's. Measured with three instances (`npm run bench --
 * pg-writes`, alternated pairs, docs/decisions.md 35): 20 ms gave 3 ÷ 1 instance 89–107 % against
 * 70–98 % with 5 ms, about what no NOTIFY at all gives.
 */
const MIN_STATEMENT_INTERVAL_MS = 20;
/** One message per element of `$2`, in order: a transaction's notifications arrive in the order sent. */
const NOTIFY_SQL = "SELECT pg_notify($1, m) FROM unnest($2::text[]) WITH ORDINALITY AS t(m, i) ORDER BY i";

/** State of the channel, as `/healthz` reports it. */
export type ChannelState = "listening" | "reconnecting";

export interface CommitChannelOptions {
  /** Connection settings of the LISTEN connection (a direct one: not through a transaction pooler). */
  connection: pg.ClientConfig;
  /**
   * Makes the LISTEN connection (default `pg.Client`); the engine's finds the primary, so after a
   * failover the reconnect LISTENs on the new one (postgres/primary-locator.ts).
   */
  Client?: typeof pg.Client;
  /** Publishes through this pool (NOTIFY needs no dedicated connection). */
  pool: pg.Pool;
  channel: string;
  /** Another instance's commit `seq`, with its write set when carried. */
  onHint(seq: number, payload: string | undefined): void;
  /** Called after every (re)connect: notifications may have been missed. */
  onListening(): void;
  /** Heartbeat period on the LISTEN connection, ms (default 500). */
  heartbeatMs?: number;
  /** A heartbeat unanswered for this long drops the connection, ms (default 1000). */
  heartbeatTimeoutMs?: number;
  /** Upper bound of the reconnect backoff, ms (default 2000). */
  maxReconnectDelayMs?: number;
  /** This instance's origin in messages (default a random UUID). */
  instanceId?: string;
}

export class CommitChannel {
  /** Distinguishes this process's notifications from other instances'. */
  readonly instanceId: string;
  private client?: pg.Client;
  private reconnectTimer?: NodeJS.Timeout;
  private heartbeatTimer?: Ticking;
  private beating = false;
  /** When the last NOTIFY statement was sent (`performance.now()`), and how many messages it carried. */
  private lastSentAt = Number.NEGATIVE_INFINITY;
  private lastBatch = 0;
  private attempt = 0;
  private closed = false;
  private publishFailing = false;
  private dropping = false;
  /** Messages waiting for the statement on its way to be answered. */
  private readonly outbox: string[] = [];
  /** Settles once the outbox is empty (undefined: nothing on its way). */
  private sending?: Promise<void>;

  constructor(private readonly options: CommitChannelOptions) {
    this.instanceId = options.instanceId ?? randomUUID();
  }

  get state(): ChannelState {
    return this.client ? "listening" : "reconnecting";
  }

  /** Opens the LISTEN connection; resolves once it is listening (retries in the background after a failure). */
  async start(): Promise<void> {
    if (this.client || this.closed || this.heartbeatTimer) return;
    const heartbeatMs = this.options.heartbeatMs ?? 500;
    this.heartbeatTimer = tick("notify_heartbeat", heartbeatMs, () => this.heartbeat());
    try {
      await this.connect();
    } catch (error) {
      logger.warn("commit notification connection failed; retrying", { error: String(error) });
      this.scheduleReconnect();
    }
  }

  /** The LISTEN connection's backend process id (tests terminate it to prove reconnection). */
  listenerPid(): number | undefined {
    return (this.client as unknown as { processID?: number } | undefined)?.processID;
  }

  private async connect(): Promise<void> {
    const timeout = this.options.heartbeatTimeoutMs ?? 1000;
    const client = new (this.options.Client ?? pg.Client)({
      connectionTimeoutMillis: Math.max(2000, timeout),
      ...this.options.connection,
      application_name: `service-auth-listen-${this.instanceId}`,
    });
    client.on("notification", (msg) => {
      if (msg.channel === this.options.channel) this.receive(msg.payload ?? "");
    });
    // Errors of an idle connection arrive here; without a handler they would crash the process.
    client.on("error", (error) => this.lost(client, error));
    client.on("end", () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${pgIdent(this.options.channel)}`);
    } catch (error) {
      discard(client);
      throw error;
    }
    if (this.closed) {
      discard(client);
      return;
    }
    this.client = client;
    this.attempt = 0;
    this.options.onListening();
  }

  /** `SELECT 1` on the LISTEN connection; no answer in time means it is dead, even if the socket is open. */
  private heartbeat(): void {
    const client = this.client;
    if (!client || this.beating || this.closed) return;
    this.beating = true;
    const timeoutMs = this.options.heartbeatTimeoutMs ?? 1000;
    const timer = setTimeout(
      () => this.lost(client, new Error(`heartbeat unanswered for ${timeoutMs} ms`)),
      timeoutMs,
    );
    client.query("SELECT 1").then(
      () => {
        clearTimeout(timer);
        this.beating = false;
      },
      (error) => {
        clearTimeout(timer);
        this.beating = false;
        this.lost(client, error);
      },
    );
  }

  private lost(client: pg.Client, error?: Error): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.beating = false;
    discard(client);
    if (this.closed) return;
    logger.warn("commit notification connection lost; reconnecting", {
      error: error ? String(error) : undefined,
    });
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    const policy = RETRY_POLICIES.notifyReconnect;
    const maxMs = this.options.maxReconnectDelayMs ?? policy.maxMs;
    const delay = backoffDelayMs({ ...policy, maxMs }, this.attempt++);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connect().catch((error) => {
        logger.warn("commit notification reconnect failed", { error: String(error) });
        this.scheduleReconnect();
      });
    }, delay);
    this.reconnectTimer.unref();
  }

  private receive(message: string): void {
    const first = message.indexOf(":");
    const second = message.indexOf(":", first + 1);
    if (first < 0 || second < 0) return;
    if (message.slice(0, first) === this.instanceId) return;
    const seq = Number(message.slice(first + 1, second));
    if (!Number.isSafeInteger(seq) || seq <= 0) return;
    const payload = message.slice(second + 1);
    this.options.onHint(seq, payload === UNCARRIED ? undefined : payload);
  }

  /**
   * Tells other instances that commit `seq` happened (after it committed). Failures are logged
   * once per streak and never reach the caller: the commit log already holds the commit.
   * Messages go out together, each still its own message: those published in the same turn of the
   * event loop, while a statement is on its way, or within {@link MIN_STATEMENT_INTERVAL_MS} of a
   * statement that carried several (but not a full {@link MAX_BATCH}), in the next statement.
   * Every statement wakes every instance's LISTEN connection (a read, a parse, a turn of its
   * loop), so with N instances a statement per commit would cost each instance N wake-ups per
   * commit of its own.
   */
  publish(seq: number, payload: string): void {
    if (this.closed) return;
    if (this.outbox.length >= MAX_OUTBOX) {
      const waiting = this.outbox.length;
      if (!this.dropping)
        logger.warn("commit notifications dropped: other instances read the log", { waiting });
      this.dropping = true;
      return;
    }
    this.dropping = false;
    let message = `${this.instanceId}:${seq}:${payload}`;
    if (Buffer.byteLength(message) > MAX_PAYLOAD_BYTES) message = `${this.instanceId}:${seq}:${UNCARRIED}`;
    this.outbox.push(message);
    this.sending ??= this.drain();
  }

  /** Sends the outbox, a batch per statement, until it is empty. */
  private async drain(): Promise<void> {
    for (;;) {
      // One turn of the event loop first (commits answered in this turn join the batch), and after
      // a statement of several messages no sooner than the interval after it. Checked again after
      // each timer: a timer counts from the event loop's cached clock, which may lag the real one.
      await new Promise((resolve) => setImmediate(resolve));
      for (let wait = this.untilNextStatement(); wait > 0; wait = this.untilNextStatement())
        await new Promise((resolve) => setTimeout(resolve, Math.ceil(wait)));
      const messages = this.outbox.splice(0, MAX_BATCH);
      if (!messages.length) break;
      this.lastSentAt = performance.now();
      this.lastBatch = messages.length;
      try {
        await this.options.pool.query(NOTIFY_SQL, [this.options.channel, messages]);
        this.publishFailing = false;
      } catch (error) {
        if (!this.publishFailing) {
          logger.warn("commit notification failed; other instances will find the commit by polling", {
            error: String(error),
          });
        }
        this.publishFailing = true;
      }
    }
    // Synchronously after the outbox was found empty: a message published later starts a new drain.
    this.sending = undefined;
  }

  /** Milliseconds until the next statement may go out (≤ 0: now). */
  private untilNextStatement(): number {
    if (this.lastBatch < 2 || this.lastBatch >= MAX_BATCH) return 0;
    return this.lastSentAt + MIN_STATEMENT_INTERVAL_MS - performance.now();
  }

  /** Waits for notifications being sent (so a CLI's last write is announced), then disconnects. */
  async close(): Promise<void> {
    while (this.sending) await this.sending;
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.heartbeatTimer?.stop();
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners("end");
      await client.end().catch(() => {});
    }
  }
}

/**
 * Drops a connection without waiting for the server: a half-open or stalled socket would never
 * answer a polite goodbye.
 */
function discard(client: pg.Client): void {
  client.removeAllListeners("end");
  client.removeAllListeners("notification");
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
  void client.end().catch(() => {});
}

function pgIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
