/**
 * Connections through a transaction-mode pooler (PgBouncer `pool_mode = transaction`): each
 * transaction may run on a different server connection, so a named prepared statement created on
 * one is unknown — or, worse, already exists — on the next (`prepared statement "sa_…" already
 * exists`). This client sends every statement unnamed (parsed per execution) instead.
 *
 * LISTEN needs a session of its own and cannot go through such a pooler either: the engine opens
 * it on `DATABASE_LISTEN_URL`, a direct connection, or polls the commit log without one.
 */
import pg from "pg";
import { SettingError, settingProblem } from "../../settings/problems.ts";

/** How the engine reaches PostgreSQL: directly, or through a transaction-mode pooler. */
export type PoolerMode = "none" | "transaction";

/** A `pg.Client` that drops statement names (see the module comment). */
export class UnnamedStatementClient extends pg.Client {
  // pg's query() has a dozen overloads; this only forwards them.
  override query(config: any, ...rest: any[]): any {
    if (config instanceof pg.Query) {
      // A query made by the engine (postgres/transaction.ts `sendPrepared`), named after it was made.
      (config as { name?: string }).name = undefined;
      return (super.query as (...args: unknown[]) => unknown)(config, ...rest);
    }
    if (config && typeof config === "object" && typeof config.name === "string") {
      const { name: _name, ...unnamed } = config;
      return (super.query as (...args: unknown[]) => unknown)(unnamed, ...rest);
    }
    return (super.query as (...args: unknown[]) => unknown)(config, ...rest);
  }
}

/** `DATABASE_POOLER`: `transaction` (or `pgbouncer`) for a transaction-mode pooler, else none. */
export function poolerMode(value: string | undefined): PoolerMode {
  const v = value?.trim().toLowerCase();
  if (!v || v === "none" || v === "off" || v === "session") return "none";
  if (v === "transaction" || v === "pgbouncer") return "transaction";
  throw new SettingError(
    settingProblem(
      "DATABASE_POOLER",
      value,
      "unknown pooler mode",
      "set DATABASE_POOLER=transaction (PgBouncer in transaction mode) or none",
    ),
  );
}
