/**
 * Every setting the platform reads from the environment, read and checked in one go: `PORT`,
 * `WORKERS`, `SHUTDOWN_TIMEOUT_MS`, `SHUTDOWN_DELAY_MS`, `KEEP_ALIVE_TIMEOUT_MS`, `METRICS_PORT`,
 * `METRICS_HOST`, `METRICS_TOKEN`, `DATABASE_URL` and the settings of its engine (read replicas:
 * `DATABASE_READ_URLS`, `DATABASE_READ_WAIT_MS`). An entry point reads them with a {@link SettingsCheck}, adds its own (the auth's,
 * the mail's) and refuses once, naming all of them.
 */
import { workersSetting } from "../cluster/workers-setting.ts";
import { type MetricsOptions, metricsSetting } from "../metrics/endpoint.ts";
import { databaseTarget, durationSetting, postgresSettings } from "../storage/open.ts";
import { durabilitySetting } from "./durability.ts";
import { type SettingsCheck, settingProblem } from "./problems.ts";
import { readReplicaSettings } from "./read-replicas.ts";

/**
 * What {@link readServiceSettings} found; a bad setting's default stands in for it.
 *
 * @example
 * ```ts
 * import { readServiceSettings, type ServiceSettings, SettingsCheck } from "service-auth/server";
 *
 * const settings: ServiceSettings = readServiceSettings(new SettingsCheck());
 * await startService({ ...app, port: settings.port, workers: settings.workers, databaseUrl: settings.databaseUrl });
 * ```
 */
export interface ServiceSettings {
  port: number;
  workers: number;
  databaseUrl: string | undefined;
  shutdownTimeoutMs: number | undefined;
  /** `SHUTDOWN_DELAY_MS`: how long a signalled stop keeps serving with `/healthz` at 503 (0: none). */
  shutdownDelayMs: number | undefined;
  keepAliveTimeoutMs: number | undefined;
  /** Where `/metrics` is served (`METRICS_PORT`, `METRICS_HOST`, `METRICS_TOKEN`); undefined: nowhere. */
  metrics: MetricsOptions | undefined;
  /** No storage setting has a problem: the database may be opened (to read the settings stored there). */
  databaseSettingsOk: boolean;
}

/** `PORT`: unset is 3000; 0 picks a free port. */
export function portSetting(env: Record<string, string | undefined>, check: SettingsCheck): number {
  const raw = env.PORT?.trim();
  if (!raw) return 3000;
  const port = Number(raw);
  if (Number.isInteger(port) && port >= 0 && port <= 65_535) return port;
  check.add(
    settingProblem("PORT", env.PORT, "not a port number (0 to 65535)", "set PORT=3000, or another free port"),
  );
  return 3000;
}

/**
 * Reads the platform's settings from `env`, noting every problem in `check` (which does not refuse).
 *
 * @example
 * ```ts
 * import { readServiceSettings, SettingsCheck, startService } from "service-auth/server";
 *
 * const check = new SettingsCheck();
 * const settings = readServiceSettings(check);
 * check.refuseIfAny();
 * await startService({
 *   ...app,
 *   port: settings.port,
 *   workers: settings.workers,
 *   databaseUrl: settings.databaseUrl,
 *   metrics: settings.metrics,
 * });
 * ```
 */
export function readServiceSettings(
  check: SettingsCheck,
  env: Record<string, string | undefined> = process.env,
): ServiceSettings {
  const port = portSetting(env, check);
  const workers = check.read(() => workersSetting(env)) ?? 1;
  const shutdownDelayMs = check.read(() => durationSetting("SHUTDOWN_DELAY_MS", env, { allowZero: true }));
  const shutdownTimeoutMs = check.read(() =>
    durationSetting("SHUTDOWN_TIMEOUT_MS", env, { allowZero: true }),
  );
  const keepAliveTimeoutMs = check.read(() => durationSetting("KEEP_ALIVE_TIMEOUT_MS", env));
  const metrics = check.read(() => metricsSetting(env));
  const before = check.problems.length;
  const target = check.read(() => databaseTarget(env.DATABASE_URL));
  if (target?.kind === "postgres") {
    check.read(() => postgresSettings(target.connectionString, env));
    for (const name of [
      "DATABASE_CONNECT_TIMEOUT_MS",
      "DATABASE_STATEMENT_TIMEOUT_MS",
      "DATABASE_QUERY_TIMEOUT_MS",
    ])
      check.read(() => durationSetting(name, env));
  } else if (target?.kind === "sqlite") {
    check.read(() => durationSetting("DATABASE_BUSY_TIMEOUT_MS", env));
    check.read(() => readReplicaSettings(env, "sqlite"));
    check.read(() => durabilitySetting(env, "sqlite"));
    const synchronous = env.SQLITE_SYNCHRONOUS?.trim().toUpperCase();
    if (synchronous && synchronous !== "FULL" && synchronous !== "NORMAL") {
      check.add(
        settingProblem(
          "SQLITE_SYNCHRONOUS",
          env.SQLITE_SYNCHRONOUS,
          "neither FULL nor NORMAL",
          "set SQLITE_SYNCHRONOUS=FULL (survives power loss) or NORMAL (the default)",
        ),
      );
    }
  }
  return {
    port,
    workers,
    databaseUrl: env.DATABASE_URL,
    shutdownTimeoutMs,
    shutdownDelayMs,
    keepAliveTimeoutMs,
    metrics,
    databaseSettingsOk: check.problems.length === before,
  };
}
