import { readdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { configDefaults, defineConfig } from "vitest/config";

/**
 * Better Auth's own test files (test/better-auth, see its README) take about ten minutes in all;
 * `BETTER_AUTH_TESTS=all` runs them all, otherwise these representative ones run (core sign-up,
 * sign-in and sign-out, the error page, two-factor, multi-session, organization members, phone
 * number).
 */
const BETTER_AUTH_SUBSET = new Set([
  "api/routes/error.test.ts",
  "api/routes/sign-in.test.ts",
  "api/routes/sign-out.test.ts",
  "api/routes/sign-up.test.ts",
  "plugins/multi-session/multi-session.test.ts",
  "plugins/organization/routes/crud-members.test.ts",
  "plugins/phone-number/phone-number.test.ts",
  "plugins/two-factor/two-factor.test.ts",
]);

function testFiles(dir: string, prefix = ""): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? testFiles(join(dir, entry.name), `${prefix}${entry.name}/`)
      : entry.name.endsWith(".test.ts")
        ? [`${prefix}${entry.name}`]
        : [],
  );
}

const betterAuthExcluded =
  process.env.BETTER_AUTH_TESTS === "all"
    ? []
    : testFiles("test/better-auth")
        .filter((file) => !BETTER_AUTH_SUBSET.has(file))
        .map((file) => `test/better-auth/${file}`);

export default defineConfig({
  resolve: {
    alias: {
      // Better Auth's own tests import its source modules; these are their built forms.
      "better-auth-dist": realpathSync("node_modules/better-auth/dist"),
    },
  },
  test: {
    include: ["test/**/*.test.ts", "test/**/*.test.tsx"],
    exclude: [...configDefaults.exclude, ...betterAuthExcluded],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    setupFiles: ["test/setup.ts"],
    server: {
      deps: {
        // Better Auth's Next.js integration imports `next/headers` without an extension, which
        // only a bundler resolves (Next.js has no exports map); vite resolves it when inlined.
        inline: [/better-auth\/dist\/integrations\/next-js\.mjs$/],
      },
    },
  },
});
