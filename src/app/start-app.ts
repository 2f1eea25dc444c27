/**
 * What `service-auth start APP` does with an app (once examples/app/main.ts): every documented
 * setting read by one reader and checked all at once, refused with one report; production rules
 * (no generated secrets, real mail); development secrets generated and stored; a refused plugin
 * stops the start; then the service serves with metrics, cluster mode (`WORKERS`), drain on
 * SIGTERM / SIGINT (`SHUTDOWN_DELAY_MS`, `SHUTDOWN_TIMEOUT_MS`) and the schema check
 * (`SCHEMA_CHECK`).
 */
import {
  AdvisoryRefusal,
  authEnvProblems,
  checkAuthStarts,
  ensureAuthEnv,
  mailSenderOf,
  mailSettingsProblems,
  originSettingsProblems,
} from "../auth/index.ts";
// The product's own wiring: not part of the embedding entry point.
import { AUTH_ENV_COMMAND, missingAuthEnv } from "../auth/keys/auth-env.ts";
import {
  anyApi,
  type Backend,
  exitOnSignals,
  logger,
  type RunningCluster,
  type RunningService,
  readServiceSettings,
  type ServiceOptions,
  SettingsCheck,
  StartRefusal,
  schemaCheckSetting,
  startService,
} from "../backend/server.ts";
import { type AppDefinition, isAppDefinition } from "./define-app.ts";

/**
 * Options of {@link startApp}.
 *
 * @example
 * ```ts
 * // In a test: settings of its own, no process-wide signal handlers.
 * const service = await startApp(app, { env: { PORT: "0", DATABASE_URL: file }, exitOnSignals: false });
 * ```
 */
export interface StartAppOptions {
  /** Where the settings are read (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Stop gracefully on SIGTERM / SIGINT and exit (default true). */
  exitOnSignals?: boolean;
}

/**
 * Starts `app` as `service-auth start` does: settings read from `env` and checked at once (a
 * {@link StartRefusal} names every one to fix), the production rules, development secrets, the
 * advisory refusal, then the service. An object not made by `defineApp` (plain `startService`
 * options) gets the settings and the drain, without the auth's checks.
 *
 * @example
 * ```ts
 * import { startApp } from "service-auth/app";
 * import app from "./app.ts";
 *
 * const service = await startApp(app); // what `service-auth start` runs
 * ```
 */
export async function startApp(
  app: AppDefinition | ServiceOptions,
  options: StartAppOptions = {},
): Promise<RunningService | RunningCluster> {
  const env = options.env ?? process.env;
  const production = env.NODE_ENV === "production";
  const product = isAppDefinition(app);
  // Every setting is checked before refusing, so one start names all that need fixing: those of
  // the process environment first; the auth's and the mail's once the database (which may store
  // them) is open.
  const check = new SettingsCheck();
  const settings = readServiceSettings(check, env);
  const schemaCheck = check.read(() => schemaCheckSetting(env));
  // A database setting with a problem: there is no database to read the other settings from. A
  // cluster's primary opens none at all (its workers check the rest).
  if (!settings.databaseSettingsOk || settings.workers > 1) check.refuseIfAny();
  const prepare = async (backend: Backend) => {
    if (product) {
      if (production) check.add(...authEnvProblems(backend.env));
      // The auth reads the mail setting per request; a broken one stops the start instead.
      check.add(...mailSettingsProblems(backend.env, { production }));
      check.add(...originSettingsProblems(backend.env));
    }
    check.refuseIfAny();
    if (product && missingAuthEnv(backend.env).length > 0) {
      const generated = await ensureAuthEnv(backend, anyApi.auth.getLatestJwks);
      logger.warn(
        `generated ${generated.join(" and ")} for development and stored them in the database; for production run: ${AUTH_ENV_COMMAND}`,
      );
    }
    if (product && mailSenderOf(backend.env, { production }).kind === "dev-outbox")
      logger.info("no SMTP_URL: emails are logged (development outbox)");
    if (product) {
      // The auth is made per request; made once here, a refused plugin stops the start.
      try {
        await checkAuthStarts(backend, anyApi.auth.checkOptions);
      } catch (error) {
        if (error instanceof AdvisoryRefusal) throw new StartRefusal(`refusing to start: ${error.message}`);
        throw error;
      }
    }
    await app.prepare?.(backend);
  };
  if (product && app.defaultsOff.length > 0)
    logger.warn(`defaults turned off by the app: ${app.defaultsOff.join(", ")}`, {
      defaultsOff: [...app.defaultsOff],
    });
  if (!product) logger.warn("not a defineApp definition: the auth defaults and checks do not apply");
  const service = await startService({
    ...app,
    workers: settings.workers,
    metrics: settings.metrics ?? app.metrics,
    port: settings.port,
    databaseUrl: settings.databaseUrl ?? app.databaseUrl,
    shutdownTimeoutMs: settings.shutdownTimeoutMs ?? app.shutdownTimeoutMs,
    shutdownDelayMs: settings.shutdownDelayMs ?? app.shutdownDelayMs,
    keepAliveTimeoutMs: settings.keepAliveTimeoutMs ?? app.keepAliveTimeoutMs,
    schemaCheck,
    prepare,
    // Read above, from `env`, into the check the auth's problems join.
    settings: false,
  });
  // Before the line that says it serves: a signal sent on reading it must find the handler.
  if (options.exitOnSignals !== false) exitOnSignals(service);
  logger.info(
    `listening on ${service.url}`,
    "role" in service ? { workers: service.workerPids().length } : {},
  );
  return service;
}
