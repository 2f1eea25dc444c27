/** The PostgreSQL engine's settings (`openEngine` fills them from `DATABASE_*`). */
import type { Durability } from "../../settings/durability.ts";
import type { IndexBuildOptions } from "../indexes/build.ts";
import type { PoolerMode } from "./pooler.ts";

export interface PostgresOptions {
  /** `postgres://user:password@host:port/database` */
  connectionString: string;
  /** Largest number of pooled connections (default 10). */
  maxConnections?: number;
  /** Attempts of a write transaction before giving up on serialization conflicts (default 30). */
  maxWriteAttempts?: number;
  /** NOTIFY channel shared by the instances of one deployment (default `service_auth_commits`). */
  channel?: string;
  /** Connecting, or waiting for a pooled connection, fails after this long (default 5000 ms). */
  connectTimeoutMs?: number;
  /** The server cancels a statement running longer than this (`statement_timeout`, default 10000 ms). */
  statementTimeoutMs?: number;
  /**
   * The client gives up on a statement that got no answer for this long: a frozen or unreachable
   * server, which cannot cancel anything itself (default: statement timeout + 2000 ms).
   */
  queryTimeoutMs?: number;
  /** `ping` (for `/healthz`) fails after this long (default 1500 ms, so `/healthz` answers within 2 s). */
  pingTimeoutMs?: number;
  /**
   * Whether instances wake each other with LISTEN/NOTIFY (default true). Off, they find each
   * other's commits only by polling the commit log (`DATABASE_NOTIFY=off`).
   */
  notify?: boolean;
  /** The LISTEN connection's URL when `connectionString` goes through a pooler (`DATABASE_LISTEN_URL`). */
  listenConnectionString?: string;
  /** `transaction`: a transaction-mode pooler sits in between; no named prepared statements (`DATABASE_POOLER`). */
  pooler?: PoolerMode;
  /** Period of the commit log poll, ms (default 500 with notifications, 100 without; `DATABASE_POLL_MS`). */
  pollIntervalMs?: number;
  /** Commit log rows kept when pruning (default 10,000). */
  commitLogKeep?: number;
  /** Heartbeat period of the LISTEN connection, ms (default 500); unanswered for twice that, it is replaced. */
  heartbeatMs?: number;
  /**
   * Default true. False trusts cached identities without confirming that this instance heard every
   * commit made before the request: a session revoked on another instance stays usable here until
   * the notification arrives. Only for measuring what the check costs (`npm run bench -- postgres`).
   */
  crossInstanceCheck?: boolean;
  /**
   * Streaming standbys of the server that serve read snapshots (`DATABASE_READ_URLS`), each only
   * when fresh: it has replayed the primary's commit log head read at the read's start
   * (`postgres/read-replicas.ts`). Empty or absent: every read runs on the primary.
   */
  readConnectionStrings?: readonly string[];
  /**
   * How long a read waits for a replica to replay what it must see before the primary answers it
   * instead, ms (default 50; 0: never wait; `DATABASE_READ_WAIT_MS`).
   */
  readWaitMs?: number;
  /**
   * When a write is acknowledged (`DATABASE_DURABILITY`): `primary` (default) once the primary
   * committed it; `standby` only once a streaming standby flushed it too (`postgres/standby-ack.ts`).
   */
  durability?: Durability;
  /**
   * With `durability: "standby"`, how long a committed write waits for a standby to flush it before
   * it is answered 503 instead, ms (default: the statement timeout).
   */
  standbyAckWaitMs?: number;
  /**
   * How indexes added to tables that hold documents are built online (`INDEX_BUILD_BATCH`). The
   * builder's session lock and `CREATE INDEX CONCURRENTLY` need a session of their own: behind a
   * transaction pooler it connects to `listenConnectionString`.
   */
  indexBuild?: IndexBuildOptions;
}

/** Defaults of the timeouts; `openEngine` reads the `DATABASE_*_MS` variables over them. */
export const POSTGRES_TIMEOUT_DEFAULTS = {
  connectTimeoutMs: 5000,
  statementTimeoutMs: 10_000,
  pingTimeoutMs: 1500,
} as const;
