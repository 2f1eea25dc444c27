/**
 * A throwaway PostgreSQL server for a benchmark group, started as the tests start theirs
 * (`test/helpers/postgres.ts`) and stopped when the group ends.
 */
import { DURABLE_SETTINGS, startPostgres } from "../../test/helpers/postgres.ts";
import type { BenchContext } from "./types.ts";

/** Starts PostgreSQL, registers its stop with `ctx`, and returns the URL of a fresh database. */
export async function startBenchPostgres(
  ctx: BenchContext,
  options: { durable?: boolean; settings?: string[] } = {},
): Promise<string> {
  ctx.log(`starting PostgreSQL${options.durable ? " (durable: fsync and synchronous_commit on)" : ""}`);
  const pg = await startPostgres([...(options.durable ? DURABLE_SETTINGS : []), ...(options.settings ?? [])]);
  ctx.defer(() => pg.stop());
  return pg.createDatabase();
}
