import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { NextConfig } from "next";

/**
 * `service-auth/*` from the repository's TypeScript sources, as the package's
 * `service-auth-source` export condition says (docs/decisions.md 18): Turbopack has no setting for
 * extra conditions, so each entry point becomes an alias. An app on the installed package needs none of this.
 */
const root = join(process.cwd(), "../..");
const packageExports: Record<string, { "service-auth-source": string }> = JSON.parse(
  readFileSync(join(root, "package.json"), "utf8"),
).exports;
const sourceAliases = Object.fromEntries(
  Object.entries(packageExports).map(([entry, targets]) => [
    `service-auth${entry.slice(1)}`,
    // Turbopack reads an alias relative to the project (examples/nextjs), even an absolute one.
    relative(process.cwd(), join(root, targets["service-auth-source"])),
  ]),
);

const config: NextConfig = {
  // `npm run typecheck` checks this app with the rest of the repository; the build need not repeat it.
  typescript: { ignoreBuildErrors: true },
  // The helpers and the example import TypeScript sources with their extensions (as NodeNext wants).
  poweredByHeader: false,
  turbopack: { resolveAlias: sourceAliases },
};

export default config;
