/**
 * The SvelteKit example (examples/sveltekit) as the tests run it: `vite build` (adapter-node),
 * cached by source hash, then `node build` on a free port against a backend URL.
 */
import { join } from "node:path";
import {
  buildExample as build,
  type ExampleServer,
  type FrameworkExample,
  startExampleServer,
} from "../helpers/framework-example.ts";
import { ROOT } from "../helpers/process.ts";

const DIR = join(ROOT, "examples/sveltekit");
const EXAMPLE: FrameworkExample = {
  dir: DIR,
  outDir: join(DIR, "build"),
  notSources: [".svelte-kit", "build"],
  build: [join(ROOT, "node_modules/vite/bin/vite.js"), "build"],
};

export type SvelteKitServer = ExampleServer;

export const buildExample = () => build(EXAMPLE);

/** `node build` on 127.0.0.1:`port` with the backend at `backendUrl` (`SERVICE_AUTH_URL`). */
export function startExample(port: number, backendUrl: string): Promise<SvelteKitServer> {
  const url = `http://localhost:${port}`;
  return startExampleServer(
    EXAMPLE,
    [join(DIR, "build/index.js")],
    { HOST: "127.0.0.1", PORT: String(port), ORIGIN: url, SERVICE_AUTH_URL: backendUrl },
    /Listening on/,
    url,
  );
}
