// Serves the app on http://localhost:$PORT with SQLite in ./.data (or $DATABASE_URL).
import { ensureAuthEnv, missingAuthEnv } from "service-auth/auth";
import { anyApi, exitOnSignals, logger, startService } from "service-auth/server";
import { app } from "./app.mjs";

const service = await startService({
  ...app,
  port: Number(process.env.PORT ?? 3000),
  databaseUrl: process.env.DATABASE_URL,
  // Development: make the auth secret and signing keys on the first start (production: `service-auth env sync --auth`).
  prepare: async (backend) => {
    if (missingAuthEnv(backend.env).length > 0) await ensureAuthEnv(backend, anyApi.auth.getLatestJwks);
  },
});
logger.info(`listening on ${service.url}`);
exitOnSignals(service);
