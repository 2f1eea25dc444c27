import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tanstackStart } from "@tanstack/react-start/plugin/vite";
import { defineConfig } from "vite";

/**
 * `service-auth/*` from the repository's TypeScript sources, as the package's
 * `service-auth-source` export condition says (docs/decisions.md 18): each entry point becomes an
 * alias. An app on the installed package needs none of this.
 */
const root = join(import.meta.dirname, "../..");
const packageExports: Record<string, { "service-auth-source": string }> = JSON.parse(
  readFileSync(join(root, "package.json"), "utf8"),
).exports;
// Exact matches: `service-auth/x` must not also catch `service-auth/x/server`.
const sourceAliases = Object.entries(packageExports).map(([entry, targets]) => ({
  find: new RegExp(`^service-auth${entry.slice(1).replace(/[/.]/g, "\\$&")}$`),
  replacement: join(root, targets["service-auth-source"]),
}));

export default defineConfig({
  plugins: [tanstackStart()],
  resolve: { alias: sourceAliases },
});
