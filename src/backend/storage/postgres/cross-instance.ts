/**
 * How one PostgreSQL engine keeps in step with the other instances on its database: it installs
 * the commit log and its external-change triggers (commit-log.ts), follows the log
 * (commit-log/follower.ts) on the follower pool, and sends and hears NOTIFY wake-ups
 * (postgres/notify.ts) unless notifications are off.
 */
import { randomUUID } from "node:crypto";
import { CommitFollower } from "../commit-log/follower.ts";
import { DRAWERS_SQL, logSchemaSql, triggerSql, UNTRIGGERED_SQL } from "../commit-log/log.ts";
import { classifyDatabaseError } from "../db-errors.ts";
import type { StorageLayout } from "../engine.ts";
import { postgresDialect } from "../sql/dialect.ts";
import { type ChannelState, CommitChannel, UNCARRIED } from "./notify.ts";
import type { PostgresOptions } from "./options.ts";
import type { PostgresPools } from "./pools.ts";

/** How other instances' commits reach this one, as `/healthz` reports it. */
export type CommitChannelHealth = ChannelState | "polling";

/** Serializes concurrent migrations of several instances starting at once. */
export const MIGRATION_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtext('service-auth:migrate'))";

export class CrossInstance {
  readonly follower: CommitFollower;
  /** NOTIFY wake-ups; absent in polling mode. */
  private readonly channel?: CommitChannel;
  private readonly channelName: string;
  /** Distinguishes this instance's commit log rows and notifications from other instances'. */
  readonly instanceId: string;

  constructor(
    private readonly pools: PostgresPools,
    options: PostgresOptions,
  ) {
    this.channelName = options.channel ?? "service_auth_commits";
    this.instanceId = randomUUID();
    const notify = options.notify ?? true;
    const query = async (sql: string, params?: unknown[]) => {
      try {
        return (await pools.follower.query(sql, params)).rows;
      } catch (error) {
        // A catch-up read during an outage is a typed 503 for whoever waits on it.
        throw classifyDatabaseError(error);
      }
    };
    this.follower = new CommitFollower({
      query,
      origin: this.instanceId,
      drawers: async () => {
        const [row] = await query(DRAWERS_SQL);
        return { drawn: Number(row.drawn), drawers: row.drawers as string[] };
      },
      pollIntervalMs: options.pollIntervalMs ?? (notify ? 500 : 100),
      keep: options.commitLogKeep,
    });
    if (notify) {
      const heartbeatMs = options.heartbeatMs ?? 500;
      this.channel = new CommitChannel({
        connection: { connectionString: pools.sessionLocator.connectionString },
        Client: pools.sessionLocator.Client,
        pool: pools.main,
        channel: this.channelName,
        heartbeatMs,
        heartbeatTimeoutMs: 2 * heartbeatMs,
        onHint: (seq, payload) => this.follower.hint(seq, payload),
        onListening: () => void this.follower.sync(),
        instanceId: this.instanceId,
      });
    }
    // Another server (a failover) may lack commits this instance saw, or number new ones alike.
    for (const locator of new Set([pools.locator, pools.sessionLocator])) {
      locator.onSwitch(() => this.follower.rebase());
    }
  }

  /**
   * Installs the commit log and its external-change triggers for `layout` (DDL in a transaction of
   * its own, never mixed with data writes, serialized with other starting instances by the
   * migration lock).
   */
  async install(layout: StorageLayout): Promise<void> {
    const client = await this.pools.main.connect();
    let broken: Error | undefined;
    try {
      await client.query("BEGIN");
      await client.query(MIGRATION_LOCK_SQL);
      for (const sql of logSchemaSql()) await client.query(sql);
      const tables = Object.keys(layout.tables).map((t) => postgresDialect.names.table(t));
      const { rows } = await client.query<{ name: string }>(UNTRIGGERED_SQL, [tables]);
      for (const { name } of rows)
        for (const sql of triggerSql(name, this.channelName)) await client.query(sql);
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch((e) => (broken = e));
      throw error;
    } finally {
      client.release(broken);
    }
  }

  /** Starts following the log and listening for wake-ups (after {@link install}). */
  async follow(): Promise<void> {
    await this.follower.start();
    await this.channel?.start();
  }

  /** Tells the other instances about commit `seq` of this one (best effort: the log holds it). */
  published(seq: number, payload: string | undefined): void {
    this.channel?.publish(seq, payload ?? UNCARRIED);
  }

  /** Backend pid of the LISTEN connection (tests terminate it to prove reconnection). */
  listenerPid(): number | undefined {
    return this.channel?.listenerPid();
  }

  /** How other instances' commits reach this one: over a live LISTEN connection, or by polling only. */
  health(): CommitChannelHealth {
    return this.channel?.state ?? "polling";
  }

  async close(): Promise<void> {
    await this.channel?.close();
    this.follower.close();
  }
}
