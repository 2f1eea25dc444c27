/**
 * `npm start`: serves the example app on embedded SQLite at http://localhost:$PORT.
 * Outside production the first start generates SERVICE_AUTH_SECRET and JWKS and says so; with
 * NODE_ENV=production it refuses to start without them and prints the command that makes them.
 * Mail goes over SMTP_URL; without it the development outbox logs each message, and production
 * refuses to start. Settings are checked all at once: a refusal names every one to fix. SIGTERM /
 * SIGINT stop it gracefully: it keeps serving for SHUTDOWN_DELAY_MS (default 5 s) with /healthz at
 * 503, then requests in flight finish (at most SHUTDOWN_TIMEOUT_MS).
 * WORKERS=N (N ≥ 2) serves the port from N worker processes (cluster mode); unset, one process.
 * Stored documents that violate a changed schema refuse the start (SCHEMA_CHECK=warn: a warning).
 * METRICS_PORT (on 127.0.0.1 unless METRICS_HOST) and/or METRICS_TOKEN (on the public port) serve
 * Prometheus metrics at /metrics; with neither, /metrics answers 404.
 */
import {
  AdvisoryRefusal,
  AUTH_ENV_COMMAND,
  authEnvProblems,
  checkAuthStarts,
  ensureAuthEnv,
  mailSenderOf,
  mailSettingsProblems,
  missingAuthEnv,
  originSettingsProblems,
} from "service-auth/auth";
import {
  exitOnSignals,
  logger,
  readServiceSettings,
  SettingsCheck,
  StartRefusal,
  schemaCheckSetting,
  startService,
} from "service-auth/server";
import { app, internal } from "./app.ts";

const production = process.env.NODE_ENV === "production";

/**
 * Every setting is checked before refusing, so one start names all that need fixing: those of the
 * process environment first; the auth's and the mail's once the database (which may store them) is open.
 */
const check = new SettingsCheck();
const settings = readServiceSettings(check);

try {
  // A database setting with a problem: there is no database to read the other settings from. A
  // cluster's primary opens none at all (its workers check the rest).
  if (!settings.databaseSettingsOk || settings.workers > 1) check.refuseIfAny();
  const service = await startService({
    ...app,
    workers: settings.workers,
    metrics: settings.metrics,
    port: settings.port,
    databaseUrl: settings.databaseUrl,
    shutdownTimeoutMs: settings.shutdownTimeoutMs,
    shutdownDelayMs: settings.shutdownDelayMs,
    keepAliveTimeoutMs: settings.keepAliveTimeoutMs,
    schemaCheck: check.read(() => schemaCheckSetting()),
    prepare: async (backend) => {
      if (production) check.add(...authEnvProblems(backend.env));
      // The auth reads the mail setting per request; a broken one stops the start instead.
      check.add(...mailSettingsProblems(backend.env, { production }));
      check.add(...originSettingsProblems(backend.env));
      check.refuseIfAny();
      if (missingAuthEnv(backend.env).length > 0) {
        const generated = await ensureAuthEnv(backend, internal.auth.getLatestJwks);
        logger.warn(
          `generated ${generated.join(" and ")} for development and stored them in the database; for production run: ${AUTH_ENV_COMMAND}`,
        );
      }
      if (mailSenderOf(backend.env, { production }).kind === "dev-outbox")
        logger.info("no SMTP_URL: emails are logged (development outbox)");
      // The auth is made per request; made once here, a refused plugin stops the start.
      try {
        await checkAuthStarts(backend, internal.auth.checkOptions);
      } catch (error) {
        if (error instanceof AdvisoryRefusal) throw new StartRefusal(`refusing to start: ${error.message}`);
        throw error;
      }
    },
  });
  logger.info(
    `listening on ${service.url}`,
    "role" in service ? { workers: service.workerPids().length } : {},
  );
  exitOnSignals(service);
} catch (error) {
  // Operator errors (settings, database, port) get their report, not a stack trace.
  if (error instanceof StartRefusal) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  throw error;
}
