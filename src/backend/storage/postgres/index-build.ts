/**
 * The PostgreSQL side of online index builds (`index-build.ts`). One instance builds at a time:
 * it holds a session advisory lock on a connection of its own (not a pooled one: the build runs
 * for minutes, and `CREATE INDEX CONCURRENTLY` must run outside a transaction, which the pools'
 * pipelined connections cannot promise), so if it dies the lock goes with its session and
 * another instance takes over. Each batch is a short READ COMMITTED transaction; once the key
 * column is filled, `CREATE INDEX CONCURRENTLY` builds the SQL index without blocking writes, and
 * only then is the build unregistered.
 */
import type pg from "pg";
import { MIGRATION_BEGIN } from "../commit-log/log.ts";
import type { KeyFunction, StorageLayout } from "../engine.ts";
import { type BuildSteps, buildBatch, buildsOf, LIST_BUILDS_SQL, unregisterBuild } from "../indexes/build.ts";
import type { IndexRef } from "../indexes/building.ts";
import { postgresDialect } from "../sql/dialect.ts";
import { runAsync } from "../sql/migration.ts";
import { quote } from "../sql/names.ts";
import type { PostgresOptions } from "./options.ts";
import type { PrimaryLocator } from "./primary-locator.ts";

const LOCK_KEY = "hashtext('service-auth:index-build')";

/** Whether the index `$1` exists in the current schema, and is valid (a cancelled concurrent build leaves it invalid). */
const INDEX_STATE_SQL = `SELECT i.indisvalid AS valid FROM pg_index i
JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname = $1 AND n.nspname = current_schema()`;

export class PostgresBuildSteps implements BuildSteps {
  private client?: pg.Client;

  constructor(
    private readonly options: PostgresOptions,
    private readonly pool: pg.Pool,
    /** Makes the session connection (to the primary; postgres/primary-locator.ts). */
    private readonly sessions: PrimaryLocator,
    private readonly layout: StorageLayout,
    private readonly keysOf: KeyFunction,
  ) {}

  async list(): Promise<IndexRef[]> {
    return buildsOf((await this.pool.query(LIST_BUILDS_SQL)).rows, this.layout);
  }

  async acquire(): Promise<boolean> {
    const client = new this.sessions.Client({
      // A transaction pooler cannot keep a session lock: the direct URL, when there is one.
      connectionString: this.sessions.connectionString,
      connectionTimeoutMillis: this.options.connectTimeoutMs ?? 5000,
      keepAlive: true,
      application_name: "service-auth-index-build",
    });
    client.on("error", () => {});
    await client.connect();
    try {
      // A concurrent index build of a large table takes longer than any request may.
      await client.query("SET statement_timeout = 0");
      const { rows } = await client.query(`SELECT pg_try_advisory_lock(${LOCK_KEY}) AS ok`);
      if (rows[0].ok) {
        this.client = client;
        return true;
      }
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
    await client.end();
    return false;
  }

  async release(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    // Ending the session releases the lock.
    await client?.end().catch(() => {});
  }

  /** Ends the session: a running statement fails, its transaction rolls back, an unfinished concurrent index is left invalid (dropped and made again on resuming). */
  abort(): Promise<void> {
    return this.release();
  }

  private get session(): pg.Client {
    if (!this.client) throw new Error("index build without its lock");
    return this.client;
  }

  async batch(build: IndexRef, batchSize: number): Promise<number | null> {
    const client = this.session;
    // Marked as the engine's: the external-change triggers skip it (it changes no document).
    await client.query(MIGRATION_BEGIN);
    try {
      const read = await runAsync(
        buildBatch(postgresDialect, build, this.keysOf, batchSize),
        async ({ sql, params }) => (await client.query(sql, params)).rows,
      );
      await client.query("COMMIT");
      return read;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    }
  }

  async finish(build: IndexRef): Promise<void> {
    const client = this.session;
    const { names } = postgresDialect;
    const name = names.index(build.table, build.index);
    const { rows } = await client.query(INDEX_STATE_SQL, [name]);
    if (rows.length && !rows[0].valid) {
      // Left by a build that was interrupted half-way: start that part again.
      await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${quote(name)}`);
    }
    if (!rows.length || !rows[0].valid) {
      await client.query(
        `CREATE INDEX CONCURRENTLY ${quote(name)} ON ${quote(names.table(build.table))} (${quote(names.keyColumn(build.index))})`,
      );
    }
    const { sql, params } = unregisterBuild(postgresDialect, build);
    await client.query(sql, params);
  }
}
