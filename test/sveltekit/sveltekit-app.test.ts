/**
 * The SvelteKit example (examples/sveltekit, `vite build` with adapter-node, then `node build`) in
 * Chromium: the server's `load` fetches the user's messages with the request's JWT, the page
 * hydrates and goes live through `service-auth/svelte` stores, the `/api/auth` proxy runs in
 * `handle`. The scenarios are the ones every framework example passes
 * (test/helpers/framework-example-scenarios.ts).
 */
import { describeFrameworkExample } from "../helpers/framework-example-scenarios.ts";
import { buildExample, startExample } from "./sveltekit-example.ts";

describeFrameworkExample({
  name: "SvelteKit example in Chromium",
  buildExample,
  startExample,
  emailPrefix: "svelte",
});
