/**
 * Cross-instance commit notifications over PostgreSQL LISTEN/NOTIFY.
 *
 * Every instance NOTIFYs after its commits and LISTENs on one dedicated connection. A message is
 * `<instance id>:<payload>`; an instance ignores its own. A payload that does not fit NOTIFY's
 * limit (8000 bytes) is replaced by {@link UNKNOWN_WRITES}, which receivers treat as "re-check
 * everything". If the LISTEN connection drops, it reconnects with backoff and then reports one
 * unknown commit, because notifications sent while it was away are lost.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { logger } from "../logger.ts";

/** Marker payload: a commit whose write set is not carried. */
export const UNKNOWN_WRITES = "*";
/** NOTIFY rejects payloads of 8000 bytes or more. */
const MAX_PAYLOAD_BYTES = 7999;

export type CommitListener = (payload?: string) => void;

export interface CommitChannelOptions {
  /** Connection settings of the LISTEN connection (same database as the pool). */
  connection: pg.ClientConfig;
  /** Publishes through this pool (NOTIFY needs no dedicated connection). */
  pool: pg.Pool;
  channel: string;
  /** Upper bound of the reconnect backoff, in ms (default 5000). */
  maxReconnectDelayMs?: number;
}

export class CommitChannel {
  /** Distinguishes this process's notifications from other instances'. */
  readonly instanceId = randomUUID();
  private readonly listeners = new Set<CommitListener>();
  private client?: pg.Client;
  private reconnectTimer?: NodeJS.Timeout;
  private attempt = 0;
  private closed = false;
  /** Set when a notification arrived with nobody listening; the first listener gets an unknown commit. */
  private missed = false;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly options: CommitChannelOptions) {}

  /** Opens the LISTEN connection; resolves once it is listening. */
  async start(): Promise<void> {
    if (this.client || this.closed) return;
    await this.connect();
  }

  /** The LISTEN connection's backend process id (tests terminate it to prove reconnection). */
  async listenerPid(): Promise<number | undefined> {
    return (this.client as unknown as { processID?: number } | undefined)?.processID;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
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
      client.removeAllListeners("end");
      await client.end().catch(() => {});
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.attempt = 0;
  }

  private lost(client: pg.Client, error?: Error): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.removeAllListeners("end");
    void client.end().catch(() => {});
    if (this.closed) return;
    logger.warn("commit notification connection lost; reconnecting", {
      error: error ? String(error) : undefined,
    });
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    const cap = this.options.maxReconnectDelayMs ?? 5000;
    const delay = Math.min(cap, 50 * 2 ** this.attempt++) * (0.5 + Math.random() / 2);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connect().then(
        // Commits made while the connection was down were not heard: re-check everything.
        () => this.deliver(undefined),
        (error) => {
          logger.warn("commit notification reconnect failed", { error: String(error) });
          this.scheduleReconnect();
        },
      );
    }, delay);
    this.reconnectTimer.unref();
  }

  private receive(message: string): void {
    const sep = message.indexOf(":");
    if (sep < 0) return;
    if (message.slice(0, sep) === this.instanceId) return;
    const payload = message.slice(sep + 1);
    this.deliver(payload === UNKNOWN_WRITES ? undefined : payload);
  }

  private deliver(payload: string | undefined): void {
    if (this.closed) return;
    if (this.listeners.size === 0) {
      this.missed = true;
      return;
    }
    for (const l of this.listeners) {
      try {
        l(payload);
      } catch (e) {
        logger.error("external commit listener failed", { error: String(e) });
      }
    }
  }

  onCommit(listener: CommitListener): () => void {
    this.listeners.add(listener);
    if (this.missed) {
      this.missed = false;
      queueMicrotask(() => this.deliver(undefined));
    }
    return () => this.listeners.delete(listener);
  }

  /** NOTIFYs other instances; an oversized payload becomes {@link UNKNOWN_WRITES}. */
  async publish(payload: string): Promise<void> {
    if (this.closed) return;
    let message = `${this.instanceId}:${payload}`;
    if (Buffer.byteLength(message) > MAX_PAYLOAD_BYTES || payload === UNKNOWN_WRITES) {
      message = `${this.instanceId}:${UNKNOWN_WRITES}`;
    }
    const sent = this.options.pool.query("SELECT pg_notify($1, $2)", [this.options.channel, message]);
    this.inFlight.add(sent);
    try {
      await sent;
    } finally {
      this.inFlight.delete(sent);
    }
  }

  /** Waits for notifications being sent (so a CLI's last write is announced), then disconnects. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners("end");
      await client.end().catch(() => {});
    }
    this.listeners.clear();
  }
}

function pgIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
