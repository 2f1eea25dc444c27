/**
 * Production / scale-out storage on PostgreSQL, with the same physical layout as SQLite: one
 * table `t_<name>` per schema table holding each document as JSON text plus one BYTEA key column
 * per index (bytea compares with memcmp, exactly like the encoded keys), a btree index per key
 * column, and a `_layout` table recording which index fields each key column was built from.
 *
 * Reads run in one REPEATABLE READ READ ONLY transaction (a consistent snapshot); writes run in
 * SERIALIZABLE transactions, retried on serialization failures and deadlocks. Several server
 * instances may share one database: every write transaction appends its write set to the commit
 * log (commit-log.ts) before it commits, other instances follow the log (commit-log/follower.ts), and
 * NOTIFY wakes them up sooner (postgres/notify.ts).
 *
 * Documents are stored as TEXT rather than JSONB: JSONB rejects the NUL character in strings and
 * reorders object keys, while documents must round-trip exactly as on SQLite; nothing queries
 * inside documents in SQL (every indexed value lives in a key column).
 *
 * The statements and the layout migration are shared with SQLite (`sql/statements.ts`,
 * `sql/migration.ts`, `postgresDialect` in `sql/dialect.ts`). This file ties the parts together:
 * connections (postgres/pools.ts), the transaction loop (postgres/transaction-loop.ts) and its
 * statements (postgres/transaction.ts), and the other instances (postgres/cross-instance.ts).
 */

import type pg from "pg";
import {
  ENGINE_WRITE_BEGIN,
  MAX_LOGGED_BYTES,
  MIGRATION_BEGIN,
  READ_BEGIN,
  snapshotHead,
} from "../commit-log/log.ts";
import { classifyDatabaseError, databaseUnavailable } from "../db-errors.ts";
import type {
  KeyFunction,
  Reachability,
  ReadTransaction,
  ScanRequest,
  StorageEngine,
  StorageLayout,
  WriteTransaction,
} from "../engine.ts";
import { DEFAULT_INDEX_BUILD_BATCH, IndexBuilder } from "../indexes/build.ts";
import { BuildingIndexes, type IndexRef } from "../indexes/building.ts";
import { OutageBreaker } from "../outage-breaker.ts";
import { postgresDialect } from "../sql/dialect.ts";
import { migrationProgram, runAsync } from "../sql/migration.ts";
import { SqlStatements } from "../sql/statements.ts";
import { DatabaseConnectError } from "./connect-error.ts";
import { type CommitChannelHealth, CrossInstance, MIGRATION_LOCK_SQL } from "./cross-instance.ts";
import { PostgresBuildSteps } from "./index-build.ts";
import { POSTGRES_TIMEOUT_DEFAULTS, type PostgresOptions } from "./options.ts";
import { PostgresPools } from "./pools.ts";
import {
  checkServerRole,
  type PrimaryLocator,
  SERVER_ROLE_SQL,
  ServerNotPrimaryError,
} from "./primary-locator.ts";
import { ReadReplicas } from "./read-replicas.ts";
import type { ReplicaState } from "./replica.ts";
import { checkStandbyAckPreconditions, StandbyAck } from "./standby-ack.ts";
import { PgReader, PgWriter } from "./transaction.ts";
import { runTransaction, type TransactionKind } from "./transaction-loop.ts";

export type { CommitChannelHealth } from "./cross-instance.ts";
export { POSTGRES_TIMEOUT_DEFAULTS, type PostgresOptions } from "./options.ts";

/** A read snapshot before the commit log exists. */
const PLAIN_READ_BEGIN = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

/**
 * With a primary to find (several hosts, or `target_session_attrs=read-write`) a read's opening
 * round trip also asks whether its server still is the primary: a pooled connection to an old
 * primary, fenced read-only in a switchover, would otherwise serve reads that miss the new
 * primary's commits (postgres/primary-locator.ts). A named statement of its own, planned once per
 * connection: in the opening's text it was planned on every read, about 50 µs of latency a read
 * once it asked about the synchronous standby too (decision 38).
 */
const ROLE_CHECK: pg.QueryConfig = { name: "service_auth_server_role", text: SERVER_ROLE_SQL };

/**
 * Checks the role check's answer (it throws when not the primary); for a degraded primary, returns
 * the confirmation that it was not replaced meanwhile (primary-locator.ts).
 */
function roleChecked(role: unknown, locator: PrimaryLocator, client: object): Promise<void> | undefined {
  if (role === undefined || checkServerRole(role) === "primary") return undefined;
  return locator.replaced(client).then((replaced) => {
    if (replaced) throw new ServerNotPrimaryError("the PostgreSQL server was replaced by another primary");
  });
}

export class PostgresEngine implements StorageEngine {
  readonly kind = "postgres" as const;
  private readonly pools: PostgresPools;
  private readonly instances: CrossInstance;
  private logInstalled = false;
  private readonly crossInstanceCheck: boolean;
  /** Distinguishes this instance's commit log rows and notifications from other instances'. */
  readonly instanceId: string;
  /** Statement texts of the migrated layout. */
  private sql = new SqlStatements(postgresDialect, { tables: {} });
  private readonly maxWriteAttempts: number;
  /** Requests fail at once while the server is known unreachable (outage-breaker.ts). */
  private readonly breaker: OutageBreaker;
  /** The breaker, for retries that wait for the server to answer again. */
  get reachability(): Reachability {
    return this.breaker;
  }
  private readonly options: PostgresOptions;
  private readonly building = new BuildingIndexes();
  private builder?: IndexBuilder;
  /** Streaming standbys serving fresh read snapshots (`DATABASE_READ_URLS`); absent without them. */
  private readonly replicas?: ReadReplicas;

  /** Write transactions; acknowledged only once a standby has them with `durability: "standby"`. */
  private readonly engineWrite: TransactionKind<PgWriter>;

  /** Whether reads check that their server still is the primary (see {@link ROLE_CHECK}). */
  private readonly checkRole: boolean;
  /** A read snapshot before the commit log exists. */
  private readonly plainRead: TransactionKind<PgReader>;

  /** Read snapshots once the commit log exists: with its head, which confirms cached identities. */
  private readonly readWithHead: TransactionKind<PgReader> = {
    begin: READ_BEGIN,
    Transaction: PgReader,
    pipelined: true,
    onBegin: (tx, begun, _before, role) => {
      tx.logHead = snapshotHead(begun);
      return roleChecked(role, this.pools.locator, tx.connection);
    },
    // Against what had been delivered when the identity was trusted, not now: a commit delivered
    // meanwhile may have dropped it.
    confirm: (tx) =>
      tx.logHead !== undefined && tx.trustedAt !== undefined && tx.logHead <= tx.trustedAt
        ? undefined
        : this.instances.follower.sync(),
  };

  private readonly connectionString: string;

  constructor(options: PostgresOptions) {
    this.connectionString = options.connectionString;
    this.options = options;
    this.pools = new PostgresPools(options);
    this.checkRole = this.pools.locator.list.target === "read-write";
    const after = this.checkRole ? ROLE_CHECK : undefined;
    this.readWithHead.after = after;
    this.plainRead = {
      begin: PLAIN_READ_BEGIN,
      after,
      Transaction: PgReader,
      pipelined: true,
      onBegin: (tx, _begun, _before, role) => roleChecked(role, this.pools.locator, tx.connection),
    };
    this.engineWrite = {
      begin: ENGINE_WRITE_BEGIN,
      Transaction: PgWriter,
      write: true,
      ...(options.durability === "standby"
        ? {
            acknowledge: new StandbyAck(
              async (sql) => (await this.pools.main.query(sql)).rows,
              options.standbyAckWaitMs ??
                options.statementTimeoutMs ??
                POSTGRES_TIMEOUT_DEFAULTS.statementTimeoutMs,
            ),
          }
        : {}),
    };
    this.instances = new CrossInstance(this.pools, options);
    this.instanceId = this.instances.instanceId;
    this.maxWriteAttempts = options.maxWriteAttempts ?? 30;
    this.crossInstanceCheck = options.crossInstanceCheck ?? true;
    this.breaker = new OutageBreaker({ probe: (timeoutMs) => this.pools.probe(timeoutMs) });
    if (options.readConnectionStrings?.length) {
      this.replicas = new ReadReplicas(options.readConnectionStrings, {
        options,
        queryPrimary: async (sql) => {
          try {
            return (await this.pools.follower.query(sql)).rows;
          } catch (error) {
            throw classifyDatabaseError(error);
          }
        },
        statements: () => this.sql,
        confirm: (tx) => this.readWithHead.confirm?.(tx),
      });
    }
  }

  /** Each read replica's state, in `DATABASE_READ_URLS` order (empty without replicas). */
  replicaStates(): ReplicaState[] {
    return this.replicas?.states() ?? [];
  }

  /** Backend pid of the LISTEN connection (tests terminate it to prove reconnection). */
  async listenerPid(): Promise<number | undefined> {
    return this.instances.listenerPid();
  }

  /** How other instances' commits reach this one: over a live LISTEN connection, or by polling only. */
  commitChannel(): CommitChannelHealth {
    return this.instances.health();
  }

  poolUsage(): { inUse: number; waiting: number } {
    const { main } = this.pools;
    return { inUse: main.totalCount - main.idleCount, waiting: main.waitingCount };
  }

  commitLag(): Promise<number> {
    return this.instances.follower.lag();
  }

  /**
   * Migrates under the migration lock; new indexes of tables holding more than a batch are then
   * built online (`index-build.ts`, `postgres/index-build.ts`) by one instance at a time.
   */
  async migrate(layout: StorageLayout, keysOf: KeyFunction): Promise<void> {
    const batchSize = this.options.indexBuild?.batchSize ?? DEFAULT_INDEX_BUILD_BATCH;
    let building: IndexRef[] = [];
    // The first connection: a failure here is a start-up report naming where and why, not a 503.
    const client = await this.pools.main.connect().catch((error) => {
      throw new DatabaseConnectError(this.connectionString, error);
    });
    let broken: Error | undefined;
    try {
      if (this.options.durability === "standby") await checkStandbyAckPreconditions(client);
      // READ COMMITTED: once the lock is ours, each statement sees what an earlier migrator committed.
      await client.query(MIGRATION_BEGIN);
      await client.query(MIGRATION_LOCK_SQL);
      building = await runAsync(
        migrationProgram(postgresDialect, layout, keysOf, batchSize),
        async ({ sql, params }) => (await client.query(sql, params)).rows,
      );
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch((e) => (broken = e));
      throw classifyDatabaseError(this.pools.lostReason(client) ?? error);
    } finally {
      client.release(broken ?? this.pools.lostReason(client));
    }
    this.sql = new SqlStatements(postgresDialect, layout, this.building);
    this.building.replace(building);
    await this.instances.install(layout);
    this.logInstalled = true;
    await this.instances.follow();
    if (this.replicas) {
      // After the migration: a replica serves reads once it replayed it (DDL has no log row).
      const { rows } = await this.pools.main.query<{ system: string; lsn: string }>(
        "SELECT (pg_control_system()).system_identifier::text AS system, pg_current_wal_insert_lsn()::text AS lsn",
      );
      await this.replicas.start({ systemIdentifier: rows[0].system, migratedAt: rows[0].lsn });
    }
    await this.builder?.stop();
    if (building.length) {
      const steps = new PostgresBuildSteps(
        this.options,
        this.pools.main,
        this.pools.sessionLocator,
        layout,
        keysOf,
      );
      this.builder = new IndexBuilder(this.building, steps, this.options.indexBuild ?? {});
    }
  }

  buildingIndexes(): IndexRef[] {
    return this.building.list();
  }

  async indexesBuilt(): Promise<void> {
    await this.builder?.done;
  }

  async read<T>(fn: (tx: ReadTransaction) => Promise<T>): Promise<T> {
    const kind = this.logInstalled && this.crossInstanceCheck ? this.readWithHead : this.plainRead;
    const onPrimary = () => runTransaction(this.pools, this.sql, kind, this.maxWriteAttempts, fn);
    // A replica needs the commit log (freshness).
    if (this.replicas && kind === this.readWithHead) {
      const replicas = this.replicas;
      return this.breaker.run(() => replicas.read(fn, onPrimary));
    }
    return this.breaker.run(onPrimary);
  }

  /**
   * Runs `fn` in a write transaction that also appends `writeSet()` to the commit log before it
   * commits, then tells other instances (NOTIFY, best effort). The number drawn is this
   * instance's own, so the follower never delivers it back here.
   */
  async write<T>(fn: (tx: WriteTransaction) => Promise<T>, writeSet?: () => string | undefined): Promise<T> {
    const { follower } = this.instances;
    // Numbers drawn by every attempt; the last attempt's number and payload are the commit's.
    const drawn: number[] = [];
    let seq: number | undefined;
    let payload: string | undefined;
    // The bookkeeping follows the transaction's own outcome, also when the breaker has already
    // answered the caller: a commit that lands late is still published here.
    const transaction = async () => {
      let result: T;
      try {
        result = await runTransaction(
          this.pools,
          this.sql,
          this.engineWrite,
          this.maxWriteAttempts,
          async (tx) => {
            seq = undefined;
            const value = await fn(tx);
            payload = writeSet?.();
            if (payload) {
              if (Buffer.byteLength(payload) > MAX_LOGGED_BYTES) payload = undefined;
              // Not awaited: COMMIT follows in the same round trip (commit-log.ts). The number is
              // known before the COMMIT's answer, so `seq` is set when the transaction returns.
              void tx.appendLog(this.instanceId, payload ?? null).then(
                (n) => {
                  seq = n;
                  drawn.push(n);
                  follower.drew(n);
                },
                () => {},
              );
            }
            return value;
          },
        );
      } catch (error) {
        follower.abandoned(drawn);
        throw error;
      }
      if (seq !== undefined) this.instances.published(seq, payload);
      return result;
    };
    return this.breaker.run(transaction);
  }

  onExternalCommit(listener: (payload?: string) => void): () => void {
    return this.instances.follower.onExternalCommit(listener);
  }

  /**
   * Nothing to wait for when `snapshot` is a read whose newest commit this instance has already
   * delivered (the common case, free: `READ_BEGIN` fetches the number with BEGIN, in the round
   * trip that opens the snapshot); otherwise one catch-up round shared with every caller that
   * arrived meanwhile. While that number is still on its way the caller goes on at once and the
   * read confirms it before answering: when the snapshot saw a commit not heard of yet, the read
   * catches up and runs again (then waiting here for the number), so nothing built on a stale
   * identity is ever answered.
   */
  syncExternalCommits(snapshot?: ReadTransaction): Promise<void> | undefined {
    if (!this.crossInstanceCheck) return undefined;
    const reader = snapshot instanceof PgReader ? snapshot : undefined;
    if (reader?.opening) {
      if (reader.speculative) {
        reader.trustedAt = Math.min(
          reader.trustedAt ?? Number.POSITIVE_INFINITY,
          this.instances.follower.position,
        );
        return undefined;
      }
      return reader.opening.then(() => this.caughtUpTo(reader.logHead));
    }
    return this.caughtUpTo(reader?.logHead);
  }

  private caughtUpTo(head: number | undefined): Promise<void> | undefined {
    const { follower } = this.instances;
    if (head !== undefined && head <= follower.position) return undefined;
    return follower.sync();
  }

  ping(): Promise<void> {
    if (this.breaker.isDown) return Promise.reject(databaseUnavailable());
    return this.pools.ping();
  }

  /**
   * The plan of a scan. Sequential scans are disabled for this EXPLAIN only: on a small table the
   * planner rightly prefers one, and the question asked is whether the index serves the scan.
   */
  async explainScan(req: ScanRequest): Promise<string> {
    const client = await this.pools.main.connect();
    try {
      await client.query("BEGIN");
      await client.query("SET LOCAL enable_seqscan = off");
      const { rows } = await client.query<{ "QUERY PLAN": string }>(
        `EXPLAIN ${this.sql.scan(req)}`,
        this.sql.scanParams(req),
      );
      return rows.map((r) => r["QUERY PLAN"]).join("\n");
    } finally {
      await client.query("ROLLBACK").catch(() => {});
      client.release();
    }
  }

  async close(): Promise<void> {
    this.breaker.close();
    await this.builder?.stop();
    await this.instances.close();
    await this.replicas?.close();
    await this.pools.end();
  }
}
