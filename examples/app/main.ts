/** `npm start`: serves the example app on embedded SQLite at http://localhost:$PORT. */
import { logger, startService } from "service-auth/server";
import { app } from "./app.ts";

const port = Number(process.env.PORT ?? 3000);
const service = await startService({ ...app, port, databaseUrl: process.env.DATABASE_URL });
logger.info(`listening on ${service.url}`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void service.close().then(() => process.exit(0));
  });
}
