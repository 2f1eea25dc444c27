/**
 * The PostgreSQL engine's connections: two pools with one job each, and what is known about
 * connections that died while checked out.
 *
 * - `main`: transactions. A transaction's body never waits for another transaction: with every
 *   connection held by a body waiting for one more, none would come. (The runtime resolves a
 *   lazily asked identity inside the asking call's transaction for this reason; docs/decisions.md 37.)
 * - `follower`: the commit log follower's. Requests wait for it while holding a transaction's
 *   connection, so sharing the main pool would deadlock a busy server (every connection held by a
 *   request waiting for the follower, which waits for a connection).
 *
 * A connection whose server is no longer trusted (postgres/primary-locator.ts: the primary moved,
 * or the server turned read-only) serves no further transaction: checked out, it is dropped and
 * another taken; released, it is destroyed instead of pooled; idle, it is closed at once.
 *
 * Connections run in pg's pipeline mode: a statement goes out without waiting for the answers to
 * those before it, so a read snapshot's `BEGIN` and its first `SELECT` share one round trip. Code
 * that needs one statement's outcome before the next simply awaits it, as before.
 */
import pg from "pg";
import { logger } from "../../logger.ts";
import { classifyDatabaseError } from "../db-errors.ts";
import { POSTGRES_TIMEOUT_DEFAULTS, type PostgresOptions } from "./options.ts";
import { UnnamedStatementClient } from "./pooler.ts";
import { PrimaryLocator } from "./primary-locator.ts";

/** Rejects with `error()` when `promise` has not settled within `ms`. */
function withDeadline<T>(promise: Promise<T>, ms: number, error: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(error()), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** Why a stale connection was dropped (see the module comment). */
const STALE = "PostgreSQL connection to a server no longer the primary: dropped";

/**
 * A pool whose checkouts (`connect`, and `query` through it) never hand out a stale connection and
 * whose releases destroy one; {@link closeIdleStale} closes the idle ones.
 */
class CurrentServerPool extends pg.Pool {
  /** The pool's connections that are idle (released, not checked out since). */
  private readonly idle = new Set<pg.PoolClient>();

  constructor(
    config: pg.PoolConfig,
    private readonly locator: PrimaryLocator,
  ) {
    super(config);
    this.on("release", (_error, client) => this.idle.add(client));
    this.on("acquire", (client) => this.idle.delete(client));
    this.on("remove", (client) => this.idle.delete(client));
  }

  // pg-pool's connect() has a promise and a callback form; its query() uses the callback.
  override connect(callback?: any): any {
    const current = this.current();
    if (!callback) return current;
    current.then(
      (client) => callback(undefined, client, client.release),
      (error) => callback(error),
    );
    return undefined;
  }

  /** Closes the idle connections that are stale (their checkout then drops them from the pool). */
  closeIdleStale(): void {
    for (const client of this.idle) {
      if (!this.locator.isStale(client)) continue;
      this.idle.delete(client);
      client.end().catch(() => {});
    }
  }

  private async current(): Promise<pg.PoolClient> {
    for (;;) {
      const client = await super.connect();
      if (this.locator.isStale(client)) {
        client.release(new Error(STALE));
        continue;
      }
      // Stale by the time it comes back (the primary moved meanwhile): destroyed, not pooled.
      const release = client.release;
      client.release = (error?: Error | boolean) =>
        release(error ?? (this.locator.isStale(client) ? new Error(STALE) : undefined));
      return client;
    }
  }
}

export class PostgresPools {
  readonly main: pg.Pool;
  readonly follower: pg.Pool;
  /** Why each pooled connection died, when it did (its `error` event); read when a transaction fails. */
  private readonly lost = new WeakMap<pg.ClientBase, Error>();
  private readonly pingTimeoutMs: number;
  private readonly probeConfig: pg.ClientConfig;
  /**
   * Where connections go: the primary among `DATABASE_URL`'s hosts, checked on every new
   * connection (postgres/primary-locator.ts). Every connection of the engine is made by its `Client`.
   */
  readonly locator: PrimaryLocator;
  /** The same for the direct session connections (LISTEN, index builds): `DATABASE_LISTEN_URL`'s, when set. */
  readonly sessionLocator: PrimaryLocator;

  constructor(options: PostgresOptions) {
    const statementTimeoutMs = options.statementTimeoutMs ?? POSTGRES_TIMEOUT_DEFAULTS.statementTimeoutMs;
    const connectTimeoutMs = options.connectTimeoutMs ?? POSTGRES_TIMEOUT_DEFAULTS.connectTimeoutMs;
    this.locator = new PrimaryLocator(
      options.connectionString,
      { connectTimeoutMs },
      options.pooler === "transaction" ? UnnamedStatementClient : pg.Client,
    );
    this.sessionLocator = options.listenConnectionString
      ? new PrimaryLocator(options.listenConnectionString, { connectTimeoutMs })
      : this.locator;
    const config: pg.PoolConfig & { pipeline: boolean } = {
      connectionString: this.locator.connectionString,
      connectionTimeoutMillis: connectTimeoutMs,
      statement_timeout: statementTimeoutMs,
      query_timeout: options.queryTimeoutMs ?? statementTimeoutMs + 2000,
      // Half-open connections (a server host gone without a FIN) are found by the kernel.
      keepAlive: true,
      max: options.maxConnections ?? 10,
      application_name: "service-auth",
      pipeline: true,
      Client: this.locator.Client,
    };
    const pools = [
      new CurrentServerPool(config, this.locator),
      new CurrentServerPool({ ...config, max: 2, application_name: "service-auth-follower" }, this.locator),
    ];
    [this.main, this.follower] = pools;
    this.locator.onStale(() => {
      for (const pool of pools) pool.closeIdleStale();
    });
    this.pingTimeoutMs = options.pingTimeoutMs ?? POSTGRES_TIMEOUT_DEFAULTS.pingTimeoutMs;
    this.probeConfig = {
      connectionString: this.locator.connectionString,
      connectionTimeoutMillis: this.pingTimeoutMs,
      query_timeout: this.pingTimeoutMs,
      application_name: "service-auth-probe",
    };
    for (const pool of pools) {
      // An idle pooled connection that dies (server restart) is dropped; the next checkout reconnects.
      pool.on("error", (error) =>
        logger.warn("PostgreSQL pooled connection failed", { error: String(error) }),
      );
      // pg-pool listens for errors of idle connections only: a connection that dies while checked
      // out (backend killed, failover) would emit an unhandled 'error' and end the process.
      pool.on("connect", (client) => {
        client.on("error", (error) => {
          if (this.lost.has(client)) return;
          this.lost.set(client, error);
          logger.warn("PostgreSQL connection lost", { error: String(error) });
        });
      });
    }
  }

  /**
   * `client` found its server no longer the primary: no connection to it serves again (the
   * locator's epoch moves on, idle ones are closed, `client` is destroyed when released).
   */
  retire(client: pg.ClientBase): void {
    this.locator.retire(client);
  }

  /** Why `client` died while checked out; undefined while it is alive. */
  lostReason(client: pg.ClientBase): Error | undefined {
    return this.lost.get(client);
  }

  /** A connection for a transaction; an unreachable server is DATABASE_UNAVAILABLE. */
  async connect(): Promise<pg.PoolClient> {
    try {
      return await this.main.connect();
    } catch (error) {
      logger.warn("PostgreSQL connection failed", { error: String(error) });
      throw classifyDatabaseError(error);
    }
  }

  /**
   * `SELECT 1` within `pingTimeoutMs`: a frozen server (or a pool full of hung connections) fails
   * the ping in time rather than hanging `/healthz`; the abandoned attempt ends on its own timeouts.
   */
  async ping(): Promise<void> {
    try {
      await withDeadline(
        this.main.query("SELECT 1"),
        this.pingTimeoutMs,
        () => new Error(`no answer within ${this.pingTimeoutMs} ms`),
      );
    } catch (error) {
      throw classifyDatabaseError(error);
    }
  }

  /**
   * `SELECT 1` on a connection of its own within `timeoutMs` (default `pingTimeoutMs`): unlike
   * {@link ping}, a pool full of slow (or hung) transactions does not fail it, so it tells an
   * outage from a busy database. The connection goes where the pools' go: with several hosts it
   * fails until one is the primary.
   */
  async probe(timeoutMs = this.pingTimeoutMs): Promise<void> {
    const client = new this.locator.Client({
      ...this.probeConfig,
      connectionTimeoutMillis: timeoutMs,
      query_timeout: timeoutMs,
    });
    // A connection that dies (or is cut below) must not throw an unhandled 'error'.
    client.on("error", () => {});
    try {
      await withDeadline(
        client.connect().then(() => client.query("SELECT 1")),
        timeoutMs,
        () => new Error(`no answer within ${timeoutMs} ms`),
      );
    } finally {
      // On a frozen server this destroys the socket rather than waiting for a goodbye.
      client.end().catch(() => {});
    }
  }

  async end(): Promise<void> {
    await Promise.all([this.main.end(), this.follower.end()]);
  }
}
