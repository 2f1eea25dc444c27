/**
 * The settings `startService` applies by itself (issue 46): what its options leave unsaid is read
 * from the environment with the reader `service-auth start` uses (`readServiceSettings`), every
 * problem found at once and refused with one report. An option given explicitly wins, and the
 * setting it replaces is not checked.
 */
import { type SchemaCheckMode, schemaCheckSetting } from "../evolution/startup-check.ts";
import type { MetricsOptions } from "../metrics/endpoint.ts";
import { SettingsCheck, settingProblem } from "./problems.ts";
import { readServiceSettings } from "./service-settings.ts";

/** The options of `startService` (`ServiceOptions`, `workers` of cluster mode) that settings fill. */
interface SettingOptions {
  settings?: Record<string, string | undefined> | false;
  port?: number;
  workers?: number;
  databaseUrl?: string;
  engine?: unknown;
  shutdownDelayMs?: number;
  shutdownTimeoutMs?: number;
  keepAliveTimeoutMs?: number;
  metrics?: MetricsOptions;
  schemaCheck?: SchemaCheckMode;
}

/** The settings each option replaces, by name: given, their problems do not refuse the start. */
const REPLACED_BY: [option: keyof SettingOptions, settings: RegExp][] = [
  ["port", /^PORT$/],
  ["workers", /^WORKERS$/],
  ["shutdownDelayMs", /^SHUTDOWN_DELAY_MS$/],
  ["shutdownTimeoutMs", /^SHUTDOWN_TIMEOUT_MS$/],
  ["keepAliveTimeoutMs", /^KEEP_ALIVE_TIMEOUT_MS$/],
  ["metrics", /^METRICS_/],
  ["schemaCheck", /^SCHEMA_CHECK$/],
  // An engine made by the caller: no database setting is used.
  ["engine", /^(DATABASE_|SQLITE_)/],
];

/**
 * `options` with every setting they leave unsaid read from `options.settings` (default
 * `process.env`): `PORT`, `WORKERS`, `SHUTDOWN_DELAY_MS`, `SHUTDOWN_TIMEOUT_MS`,
 * `KEEP_ALIVE_TIMEOUT_MS`, `METRICS_*`, `DATABASE_URL` (and its engine's settings) and
 * `SCHEMA_CHECK`. Throws one `SettingsRefusal` naming every setting to fix. `settings: false`
 * returns `options` as given.
 */
export function withServiceSettings<O extends SettingOptions>(options: O): O {
  if (options.settings === false) return options;
  const given = (option: keyof SettingOptions) => options[option] !== undefined;
  const source = options.settings ?? process.env;
  // An explicit databaseUrl is checked as DATABASE_URL would be, with its engine's settings.
  const env = given("databaseUrl") ? { ...source, DATABASE_URL: options.databaseUrl } : source;
  const check = new SettingsCheck();
  const settings = readServiceSettings(check, env);
  const schemaCheck = check.read(() => schemaCheckSetting(env));
  // Cluster mode hands the caller a RunningCluster in the primary, which a caller that gave no
  // `workers` does not expect: it is told how to ask for it instead of being ignored.
  if (options.workers === undefined && settings.workers > 1)
    check.add(
      settingProblem(
        "WORKERS",
        env.WORKERS,
        "cluster mode, but this program calls startService without `workers`",
        "pass `workers: workersSetting()` to startService (the primary gets a RunningCluster), start the app with `service-auth start`, or unset WORKERS",
      ),
    );
  const replaced = REPLACED_BY.filter(([option]) => given(option)).map(([, names]) => names);
  const problems = check.problems.filter((p) => !replaced.some((names) => names.test(p.name)));
  const refusal = new SettingsCheck();
  refusal.add(...problems);
  refusal.refuseIfAny();
  return {
    ...options,
    port: options.port ?? settings.port,
    databaseUrl: options.engine ? options.databaseUrl : settings.databaseUrl,
    shutdownDelayMs: options.shutdownDelayMs ?? settings.shutdownDelayMs,
    shutdownTimeoutMs: options.shutdownTimeoutMs ?? settings.shutdownTimeoutMs,
    keepAliveTimeoutMs: options.keepAliveTimeoutMs ?? settings.keepAliveTimeoutMs,
    metrics: options.metrics ?? settings.metrics,
    schemaCheck: options.schemaCheck ?? schemaCheck,
  };
}
