/**
 * The engines every one-time credential test runs on: one instance on SQLite, and two instances on
 * one PostgreSQL database (started for the file). `describe.each(engines())` runs a file's tests
 * on both, each with its own apps.
 */
import { afterAll, beforeAll } from "vitest";
import { postgresBinDir, startPostgres, type TestPostgres } from "../../helpers/postgres.ts";
import { type OneTimeApps, type OneTimeOptions, startOneTimeApps } from "./fixture.ts";

export interface Engine {
  name: string;
  start(options?: Omit<OneTimeOptions, "databaseUrl">): Promise<OneTimeApps>;
}

/** Call at the top level of a test file: SQLite, and PostgreSQL with two instances when installed. */
export function engines(): Engine[] {
  const sqlite: Engine = { name: "SQLite", start: (options) => startOneTimeApps(options) };
  if (!postgresBinDir) return [sqlite];
  // One server for the file, started only when a PostgreSQL test runs.
  let server: Promise<TestPostgres> | undefined;
  afterAll(async () => {
    await (await server)?.stop();
  });
  return [
    sqlite,
    {
      name: "PostgreSQL, two instances",
      start: async (options) => {
        server ??= startPostgres();
        return startOneTimeApps({ ...options, databaseUrl: await (await server).createDatabase() });
      },
    },
  ];
}

/** The apps of `engine` for the enclosing describe: started before its tests, closed after. */
export function useApps(engine: Engine, options?: Omit<OneTimeOptions, "databaseUrl">): () => OneTimeApps {
  let apps: OneTimeApps | undefined;
  beforeAll(async () => {
    apps = await engine.start(options);
  });
  afterAll(async () => {
    await apps?.close();
  });
  return () => {
    if (!apps) throw new Error("the apps are not started yet");
    return apps;
  };
}
