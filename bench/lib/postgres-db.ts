/**
 * A throwaway PostgreSQL server for a benchmark group, started as the tests start theirs
 * (`test/helpers/postgres.ts`) and stopped when the group ends.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DURABLE_SETTINGS, startPostgres } from "../../test/helpers/postgres.ts";
import type { BenchContext } from "./types.ts";

interface BenchPostgresOptions {
  durable?: boolean;
  settings?: readonly string[];
}

/** Starts PostgreSQL, registers its stop with `ctx`, and returns the URL of a fresh database. */
export async function startBenchPostgres(
  ctx: BenchContext,
  options: BenchPostgresOptions = {},
): Promise<string> {
  return (await startBenchPostgresServer(ctx, options)).url;
}

/** {@link startBenchPostgres}, with the server's postmaster process id (its backends are its children). */
export async function startBenchPostgresServer(
  ctx: BenchContext,
  options: BenchPostgresOptions = {},
): Promise<{ url: string; postmasterPid: number }> {
  ctx.log(`starting PostgreSQL${options.durable ? " (durable: fsync and synchronous_commit on)" : ""}`);
  const pg = await startPostgres([...(options.durable ? DURABLE_SETTINGS : []), ...(options.settings ?? [])]);
  ctx.defer(() => pg.stop());
  // The first line of postmaster.pid is the postmaster's process id.
  const postmasterPid = Number(readFileSync(join(pg.dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  return { url: await pg.createDatabase(), postmasterPid };
}
