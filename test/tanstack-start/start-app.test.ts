/**
 * The TanStack Start example (examples/tanstack-start, `vite build`, then `node serve.js`) in
 * Chromium: the route's loader fetches the user's messages with the request's JWT, the page
 * hydrates and goes live through `service-auth/react` hooks, the `/api/auth/$` server route is the
 * auth proxy. The scenarios are the ones every framework example passes
 * (test/helpers/framework-example-scenarios.ts).
 */
import { describeFrameworkExample } from "../helpers/framework-example-scenarios.ts";
import { buildExample, startExample } from "./start-example.ts";

describeFrameworkExample({
  name: "TanStack Start example in Chromium",
  buildExample,
  startExample,
  emailPrefix: "start",
});
