/**
 * Presence: every identified live connection of this instance as a row of `_connections`, so any
 * instance's queries can list them (`ctx.connections.list`), and the `_disconnects` requests any
 * instance writes (`ctx.connections.disconnect`), acted on here.
 *
 * Rows follow the connections in batches: one write per `intervalMs` with every insert, change
 * (identity, subscription count) and removal since the last. An instance also beats (`_instances`)
 * every `heartbeatMs`; any instance removes the rows of instances silent for three beats (the one
 * liveness rule, `liveness.ts`), and at start also rows of instances that never beat, so a crashed
 * instance's rows do not linger.
 *
 * An instance taken for dead while alive (a stall or an outage longer than three beats) finds its
 * heartbeat row gone at its next beat, and a batch that failed may have left its rows half
 * written: either way the next batch writes all of its rows anew (removes its own, inserts every
 * identified connection), so the listing heals instead of missing its connections for good.
 */
import { CloseCode } from "../../protocol/close-codes.ts";
import { type Commit, commitTables } from "../db/read-write-sets.ts";
import { newId, tableTag } from "../ids.ts";
import { isAlive, type Liveness, renewedEvery } from "../liveness.ts";
import { logger } from "../logger.ts";
import type { BackendRuntime } from "../runtime.ts";
import { type TickerTask, type Ticking, tick } from "../ticker.ts";
import type { Connection } from "./connection.ts";

export interface PresenceOptions {
  /** How often row changes are written (default 1000 ms). */
  intervalMs?: number;
  /** How often the instance beats (default 10 s); rows of instances silent 3 beats are removed. */
  heartbeatMs?: number;
}

/** How long a disconnect request is kept (instances that missed its write set re-read it). */
const DISCONNECT_KEEP_MS = 60_000;
const MAX_FIELD = 512;
/** Longest a stop waits for its rows' removal. */
const STOP_WAIT_MS = 2000;

interface Written {
  id: string;
  subject: string;
  sessionId: string | undefined;
  subscriptions: number;
}

const clip = (text: unknown) => (typeof text === "string" && text ? text.slice(0, MAX_FIELD) : undefined);

/** The `sessionId` claim of an identity, when it has one (the auth integration's tokens do). */
export function sessionIdOf(identity: Record<string, unknown> | null): string | undefined {
  const claim = identity?.sessionId;
  return typeof claim === "string" && claim ? claim.slice(0, MAX_FIELD) : undefined;
}

export class Presence {
  /** This process's instance id: new at every start. */
  readonly instanceId = newId(tableTag("_instances"));
  private readonly written = new Map<Connection, Written>();
  private readonly removed: string[] = [];
  private readonly applied = new Map<string, number>();
  private flushing: Promise<void> | undefined;
  private readonly timers: Ticking[] = [];
  private readonly intervalMs: number;
  /** The heartbeat's period, and when a silent instance counts as dead. */
  private readonly liveness: Liveness;
  private stopped = false;
  private started = false;
  /** The next batch rewrites every row of this instance (see the module header). */
  private rewrite = false;
  /** A beat of this instance has committed: its heartbeat row exists unless another removed it. */
  private beaten = false;

  constructor(
    private readonly backend: BackendRuntime,
    private readonly connections: ReadonlySet<Connection>,
    options: PresenceOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? 1000;
    this.liveness = renewedEvery(options.heartbeatMs ?? 10_000);
  }

  /** Beats (removing dead instances' rows) and writes row changes from now on, periodically. */
  async start(): Promise<void> {
    const every = (name: TickerTask, ms: number, task: () => Promise<void>) => {
      this.timers.push(
        tick(name, ms, () =>
          task().catch((error) => logger.warn("presence: write failed", { error: String(error) })),
        ),
      );
    };
    // Timers first: a first beat failing (database unreachable at start) is retried by them.
    every("presence_flush", this.intervalMs, () => this.flush());
    every("presence_beat", this.liveness.periodMs, () => this.beat());
    await this.beat();
  }

  /** A connection closed: its row goes with the next batch. */
  forget(conn: Connection): void {
    const row = this.written.get(conn);
    if (!row) return;
    this.written.delete(conn);
    this.removed.push(row.id);
  }

  /** Writes what changed since the last batch (one transaction); batches never overlap. */
  flush(): Promise<void> {
    const run = async () => {
      if (this.stopped) return;
      const rewrite = this.rewrite;
      this.rewrite = false;
      if (rewrite) {
        this.written.clear();
        this.removed.length = 0;
      }
      const inserts: [Connection, Written, Record<string, unknown>][] = [];
      const updates: [Written, Record<string, unknown>][] = [];
      const removed = this.removed.splice(0);
      for (const conn of this.connections) {
        const identity = conn.state === "open" ? conn.identity : null;
        const row = this.written.get(conn);
        if (!identity) {
          if (row) this.forget(conn);
          continue;
        }
        const want = {
          subject: String(identity.subject).slice(0, MAX_FIELD),
          sessionId: sessionIdOf(identity),
          subscriptions: conn.subscriptionCount,
        };
        if (!row) {
          const next = { id: "", ...want };
          inserts.push([
            conn,
            next,
            {
              instanceId: this.instanceId,
              openedAt: conn.openedAt,
              ...want,
              clientIp: clip(conn.meta.clientIp),
              userAgent: clip(conn.meta.userAgent),
            },
          ]);
        } else if (
          row.subject !== want.subject ||
          row.sessionId !== want.sessionId ||
          row.subscriptions !== want.subscriptions
        ) {
          Object.assign(row, want);
          updates.push([row, want]);
        }
      }
      removed.push(...this.removed.splice(0));
      if (!rewrite && !inserts.length && !updates.length && !removed.length) return;
      try {
        await this.backend.write(async (db) => {
          if (rewrite) await removeInstanceRows(db, this.instanceId);
          for (const id of removed) if (id) await db.delete(id);
          for (const [row, patch] of updates) if (row.id) await db.patch(row.id, stripUndefined(patch));
          for (const [, next, doc] of inserts) next.id = await db.insert("_connections", stripUndefined(doc));
        });
      } catch (error) {
        // Its removals and changes are lost with it: the next batch writes every row anew.
        this.rewrite = true;
        throw error;
      }
      for (const [conn, next] of inserts) {
        // Closed while its row was being written: remove it with the next batch.
        if (conn.state === "closed") this.removed.push(next.id);
        else this.written.set(conn, next);
      }
    };
    const next = (this.flushing ?? Promise.resolve()).then(run);
    this.flushing = next.catch(() => undefined);
    return next;
  }

  /**
   * Records this instance's heartbeat and removes the rows of instances silent for three beats
   * (by index: a beat reads only the instances, not every connection). The first beat also
   * removes rows whose instance has no heartbeat row at all.
   */
  private async beat(): Promise<void> {
    if (this.stopped) return;
    const now = Date.now();
    const first = !this.started;
    this.started = true;
    let takenForDead = false;
    await this.backend.write(async (db) => {
      takenForDead = false;
      const instances = await db.query("_instances").collect();
      const mine = instances.find((r: any) => r.instanceId === this.instanceId);
      if (mine) await db.patch(mine._id, { heartbeatAt: now });
      else {
        await db.insert("_instances", { instanceId: this.instanceId, heartbeatAt: now });
        // Not the first beat, yet gone: another instance removed this one's rows with it.
        takenForDead = this.beaten;
      }
      const live = new Set([this.instanceId]);
      for (const other of instances) {
        if (other.instanceId === this.instanceId) continue;
        if (isAlive(this.liveness, other.heartbeatAt, now)) {
          live.add(other.instanceId);
          continue;
        }
        await removeInstanceRows(db, other.instanceId);
        await db.delete(other._id);
      }
      if (first) {
        for (const row of await db.query("_connections").collect()) {
          if (!live.has(row.instanceId)) await db.delete(row._id);
        }
      }
      for (const old of await db
        .query("_disconnects")
        .withIndex("requestedAt", (q: any) => q.lt("requestedAt", now - DISCONNECT_KEEP_MS))
        .take(100))
        await db.delete(old._id);
    });
    this.beaten = true;
    if (takenForDead) {
      logger.warn(
        "presence: another instance took this one for dead (no beat for three intervals); listing its connections again",
      );
      this.rewrite = true;
      void this.flush().catch(() => undefined);
    }
    for (const [id, at] of this.applied) if (at < now - 2 * DISCONNECT_KEEP_MS) this.applied.delete(id);
  }

  /** Acts on the disconnect requests of a commit (re-read when its write set is unknown). */
  actOnDisconnects(commit: Commit): void {
    if (commit.unknown) {
      void this.rereadDisconnects().catch((error) =>
        logger.warn("presence: reading disconnects failed", { error: String(error) }),
      );
      return;
    }
    // Another instance's writes are parsed only when read: not for commits of other tables.
    if (!commitTables(commit).includes("_disconnects")) return;
    for (const w of commit.writes) {
      if (w.table === "_disconnects" && w.after) this.apply(w.after as Record<string, any>);
    }
  }

  private async rereadDisconnects(): Promise<void> {
    const since = Date.now() - DISCONNECT_KEEP_MS;
    const rows = await this.backend.read((db) =>
      db
        .query("_disconnects")
        .withIndex("requestedAt", (q: any) => q.gte("requestedAt", since))
        .collect(),
    );
    for (const row of rows) this.apply(row);
  }

  /** Closes this instance's connections a request names (each request once). */
  private apply(request: Record<string, any>): void {
    if (this.applied.has(request._id)) return;
    this.applied.set(request._id, Date.now());
    for (const conn of [...this.connections]) {
      const identity = conn.identity;
      if (!identity) continue;
      const match =
        (request.sessionId !== undefined && sessionIdOf(identity) === request.sessionId) ||
        (request.subject !== undefined && identity.subject === request.subject);
      if (match) conn.close(CloseCode.DISCONNECTED, "disconnected by an administrator");
    }
  }

  /**
   * Stops writing and removes this instance's rows (the connections are closing). Waits at most
   * `STOP_WAIT_MS` for the database: in an outage the rows expire with the missing heartbeat.
   */
  async stop(): Promise<void> {
    for (const timer of this.timers) timer.stop();
    this.stopped = true;
    const removal = (async () => {
      await this.flushing;
      await this.backend.write(async (db) => {
        await removeInstanceRows(db, this.instanceId);
        const mine = await db
          .query("_instances")
          .withIndex("instanceId", (q: any) => q.eq("instanceId", this.instanceId))
          .unique();
        if (mine) await db.delete(mine._id);
      });
    })().catch((error) =>
      logger.warn("presence: removing this instance's rows failed", { error: String(error) }),
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([removal, new Promise((done) => (timer = setTimeout(done, STOP_WAIT_MS)))]);
    clearTimeout(timer);
  }
}

async function removeInstanceRows(db: any, instanceId: string): Promise<void> {
  const rows = await db
    .query("_connections")
    .withIndex("instanceId", (q: any) => q.eq("instanceId", instanceId))
    .collect();
  for (const row of rows) await db.delete(row._id);
}

function stripUndefined(doc: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(doc).filter(([, v]) => v !== undefined));
}
