// The production server: the built client assets from dist/client, everything else through
// Start's fetch handler (dist/server/server.js, from `vite build`). PORT and HOST as usual.
import { serve } from "@hono/node-server";
import { serveStatic } from "@hono/node-server/serve-static";
import { Hono } from "hono";
import start from "./dist/server/server.js";

const root = new URL("./dist/client", import.meta.url).pathname;
const app = new Hono();
app.use("/assets/*", serveStatic({ root }));
app.all("*", (c) => start.fetch(c.req.raw));

const port = Number(process.env.PORT ?? 3001);
const hostname = process.env.HOST ?? "127.0.0.1";
serve({ fetch: app.fetch, port, hostname }, () => console.log(`Listening on http://${hostname}:${port}`));
