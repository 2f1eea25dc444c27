/**
 * `npm start`: serves the example app on embedded SQLite at http://localhost:$PORT.
 * Outside production the first start generates SERVICE_AUTH_SECRET and JWKS and says so; with
 * NODE_ENV=production it refuses to start without them and prints the command that makes them.
 * Mail goes over SMTP_URL; without it the development outbox logs each message, and production
 * refuses to start. SIGTERM / SIGINT stop it gracefully: it keeps serving for SHUTDOWN_DELAY_MS (default 5 s) with
 * /healthz at 503, then requests in flight finish (at most SHUTDOWN_TIMEOUT_MS).
 * WORKERS=N (N ≥ 2) serves the port from N worker processes (cluster mode); unset, one process.
 * METRICS_PORT (on 127.0.0.1 unless METRICS_HOST) and/or METRICS_TOKEN (on the public port) serve
 * Prometheus metrics at /metrics; with neither, /metrics answers 404.
 */
import {
  AdvisoryRefusal,
  AUTH_ENV_COMMAND,
  checkAuthStarts,
  ensureAuthEnv,
  MailSettingsError,
  mailSenderOf,
  missingAuthEnv,
} from "service-auth/auth";
import {
  DatabaseOpenError,
  exitOnSignals,
  logger,
  metricsSetting,
  startService,
  workersSetting,
} from "service-auth/server";
import { app, internal } from "./app.ts";

const port = Number(process.env.PORT ?? 3000);
const production = process.env.NODE_ENV === "production";

class RefusedToStart extends Error {}

/** A platform setting read by `read`; a bad value refuses to start with its message. */
function setting<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw new RefusedToStart(error instanceof Error ? error.message : String(error));
  }
}

/** A duration in ms from the environment (unset: the platform's default). */
function durationSetting(name: string): number | undefined {
  const text = process.env[name];
  if (text === undefined || text === "") return undefined;
  const ms = Number(text);
  if (!Number.isSafeInteger(ms) || ms < 0)
    throw new RefusedToStart(`${name} must be a number of milliseconds`);
  return ms;
}

try {
  const service = await startService({
    ...app,
    workers: setting(workersSetting),
    metrics: setting(metricsSetting),
    port,
    databaseUrl: process.env.DATABASE_URL,
    shutdownTimeoutMs: durationSetting("SHUTDOWN_TIMEOUT_MS"),
    shutdownDelayMs: durationSetting("SHUTDOWN_DELAY_MS"),
    keepAliveTimeoutMs: durationSetting("KEEP_ALIVE_TIMEOUT_MS"),
    prepare: async (backend) => {
      const missing = missingAuthEnv(backend.env);
      if (missing.length > 0) {
        if (production) {
          throw new RefusedToStart(
            `refusing to start: ${missing.join(" and ")} not set (NODE_ENV=production). Create them with:\n  ${AUTH_ENV_COMMAND}`,
          );
        }
        const generated = await ensureAuthEnv(backend, internal.auth.getLatestJwks);
        logger.warn(
          `generated ${generated.join(" and ")} for development and stored them in the database; for production run: ${AUTH_ENV_COMMAND}`,
        );
      }
      // The auth reads the mail setting per request; a broken one stops the start instead.
      try {
        const mail = mailSenderOf(backend.env, { production });
        if (mail.kind === "dev-outbox") logger.info("no SMTP_URL: emails are logged (development outbox)");
      } catch (error) {
        if (error instanceof MailSettingsError)
          throw new RefusedToStart(`refusing to start: ${error.message}`);
        throw error;
      }
      // The auth is made per request; made once here, a refused plugin stops the start.
      try {
        await checkAuthStarts(backend, internal.auth.checkOptions);
      } catch (error) {
        if (error instanceof AdvisoryRefusal) throw new RefusedToStart(`refusing to start: ${error.message}`);
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
  // Operator errors get one line, not a stack trace.
  if (error instanceof RefusedToStart || error instanceof DatabaseOpenError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  throw error;
}
