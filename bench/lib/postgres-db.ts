/**
 * A throwaway PostgreSQL server for a benchmark group, started as the tests start theirs
 * (`test/helpers/postgres.ts`) and stopped when the group ends.
 */
import { startPostgres } from "../../test/helpers/postgres.ts";
import type { BenchContext } from "./types.ts";

/** Starts PostgreSQL, registers its stop with `ctx`, and returns the URL of a fresh database. */
export async function startBenchPostgres(ctx: BenchContext): Promise<string> {
  ctx.log("starting PostgreSQL");
  const pg = await startPostgres();
  ctx.defer(() => pg.stop());
  return pg.createDatabase();
}
