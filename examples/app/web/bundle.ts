/**
 * Browser bundles of the example's pages, built with esbuild on first request and then kept in
 * memory (a failed build is retried on the next request).
 */
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("../../../", import.meta.url));

async function bundle(entry: string): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    write: false,
    logLevel: "silent",
    alias: { "service-auth/client": `${root}src/client/index.ts` },
  });
  return result.outputFiles[0].text;
}

/** A function answering the bundle of `entry` (an absolute path), built once. */
export function bundled(entry: string): () => Promise<string> {
  let pending: Promise<string> | undefined;
  return () =>
    (pending ??= bundle(entry).catch((error) => {
      pending = undefined;
      throw error;
    }));
}
