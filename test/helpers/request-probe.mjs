/**
 * Preloaded into a server process under test (`NODE_OPTIONS=--import <this file>`): prints
 * `request-start METHOD URL` on stdout the moment Node hands a request to the app, so a test can
 * wait until the server really has its requests in flight (rather than sleeping).
 */
import { subscribe } from "node:diagnostics_channel";

subscribe("http.server.request.start", ({ request }) => {
  process.stdout.write(`request-start ${request.method} ${request.url}\n`);
});
