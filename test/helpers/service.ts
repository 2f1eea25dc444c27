/** Starts real services and backends for tests: a temp SQLite file, 127.0.0.1, port 0, silent logs. */
import { type BackendOptions, BackendRuntime } from "../../src/backend/runtime.ts";
import {
  type RuntimeRunningService,
  type RuntimeServiceOptions,
  startRuntimeService,
} from "../../src/backend/service.ts";
import { SqliteEngine } from "../../src/backend/storage/sqlite/engine.ts";
import { tempDatabaseFile } from "./temp.ts";

// Tests assert on bodies and exit codes, not on logs.
process.env.LOG_LEVEL ??= "silent";

export interface TestService extends RuntimeRunningService {
  /** The SQLite file the service stores its data in. */
  databaseFile: string;
}

/** Starts a service on a fresh temp SQLite file (unless `databaseUrl` is given) at 127.0.0.1:0. */
export async function startTestService(options: RuntimeServiceOptions): Promise<TestService> {
  const databaseFile = options.databaseUrl ?? tempDatabaseFile();
  const service = await startRuntimeService({
    port: 0,
    hostname: "127.0.0.1",
    ...options,
    databaseUrl: databaseFile,
  });
  return Object.assign(service, { databaseFile, url: `http://127.0.0.1:${service.port}` });
}

/** A started backend (no HTTP) on a SQLite file; a fresh temp file unless `filename` is given. */
export async function startTestBackend(
  options: Omit<BackendOptions, "engine"> & { filename?: string },
): Promise<BackendRuntime & { databaseFile: string }> {
  const databaseFile = options.filename ?? tempDatabaseFile();
  const backend = new BackendRuntime({ ...options, engine: new SqliteEngine({ filename: databaseFile }) });
  await backend.start();
  return Object.assign(backend, { databaseFile });
}
