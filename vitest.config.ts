import { defaultClientConditions, defaultServerConditions } from "vite";
import { readdirSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { configDefaults, defineConfig } from "vitest/config";
import { ON_PINNED_LINE } from "./test/helpers/better-auth-line.ts";

/**
 * Better Auth's own test files (test/better-auth, see its README) all run on the HTTP adapter
 * (project `better-auth`, about two minutes), and these representative ones once more on the
 * direct adapter (project `better-auth-direct`); `BETTER_AUTH_TESTS=all` runs every file on both.
 */
const DIRECT_ADAPTER_SUBSET = [
  "api/routes/error.test.ts",
  "api/routes/sign-in.test.ts",
  "api/routes/sign-out.test.ts",
  "api/routes/sign-up.test.ts",
  "plugins/multi-session/multi-session.test.ts",
  "plugins/organization/routes/crud-members.test.ts",
  "plugins/phone-number/phone-number.test.ts",
  "plugins/two-factor/two-factor.test.ts",
].map((file) => `test/better-auth/${file}`);

/** Better Auth's tests run once more on PostgreSQL in `npm test` (HTTP adapter). */
const POSTGRES_SUBSET = [
  "api/routes/sign-up.test.ts",
  "api/routes/sign-in.test.ts",
  "plugins/two-factor/two-factor.test.ts",
  "plugins/organization/routes/crud-members.test.ts",
].map((file) => `test/better-auth/${file}`);

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? testFiles(join(dir, entry.name))
      : entry.name.endsWith(".test.ts")
        ? [join(dir, entry.name)]
        : [],
  );
}

/**
 * Which files hold for which Better Auth line (docs/security.md, "The newest patched Better Auth").
 * `*.next.test.ts` use the newest patched line's own APIs (`@better-auth/test-utils`); the two
 * adapter-conformance files use 1.4.9's (`better-auth/adapters/test`, which 1.7 no longer exports)
 * and have a `.next` twin. The Next.js build (`next build`, Turbopack) cannot run where the newest
 * line runs: Turbopack compiles nothing outside its root, and that copy's node_modules links out
 * of it (scripts/better-auth-next.ts); src/nextjs's other tests run there.
 */
const PINNED_LINE_ONLY = [
  "test/auth/adapter-conformance.test.ts",
  "test/postgres/adapter-conformance.test.ts",
  "test/nextjs/app-router.test.ts",
  // Likewise a production build of a framework example: once per run, on the pinned line.
  "test/sveltekit/sveltekit-app.test.ts",
  "test/tanstack-start/start-app.test.ts",
  // The README tutorial: a newcomer's `npm install` gets the pinned line, never the newest.
  "test/package/newcomer.test.ts",
];
const NEXT_LINE_ONLY = ["test/**/*.next.test.ts"];

/**
 * The platform's own tests (storage, scheduler, cluster, protocol, the runtime, the WebSocket, the
 * commits core, PostgreSQL, metrics, operations, the CLI) that load nothing of Better Auth: on the
 * newest line they would run the same code a second time, so they run on the pinned line only. A file counts as loading Better Auth when it names the auth
 * integration, the example app or a helper built on them.
 */
const LOADS_BETTER_AUTH = /src\/auth|service-auth\/auth|examples\/app|better-auth|example-app|example-server|auth-fixture/;
const PLATFORM_ONLY = [
  "test/storage",
  "test/scheduler",
  "test/cluster",
  "test/protocol",
  "test/backend",
  "test/sync",
  "test/client",
  "test/commits",
  "test/postgres",
  "test/metrics",
  "test/tracing",
  "test/schema-evolution",
  "test/operations",
  "test/cli",
  // The benchmark floors' checks: the floors are plain servers, compared once with ours.
  "test/bench",
]
  .flatMap((dir) => testFiles(dir))
  .filter((file) => !LOADS_BETTER_AUTH.test(readFileSync(file, "utf8")));

/** Projects running Better Auth's own tests (test/better-auth) on our adapters. */
/**
 * Better Auth's own tests hash passwords (scrypt) for every user they sign up, all CPU: one test
 * of `organization.test.ts` signs up dozens, 8.5 s beside two CPU burners, over 30 s with CI's
 * three workers and more load. Their time scales with the machine's load, not with a wait.
 */
const BETTER_AUTH_TEST_TIMEOUT_MS = 120_000;

function betterAuthOwnTests() {
  return [
    {
      extends: true,
      // Upstream's instances log at debug level: shown for failing tests only.
      test: {
        name: "better-auth",
        include: ["test/better-auth/**/*.test.ts"],
        silent: "passed-only" as const,
        testTimeout: BETTER_AUTH_TEST_TIMEOUT_MS,
      },
    },
    {
      extends: true,
      test: {
        name: "better-auth-direct",
        include: process.env.BETTER_AUTH_TESTS === "all" ? testFiles("test/better-auth") : DIRECT_ADAPTER_SUBSET,
        env: { BETTER_AUTH_TESTS_ADAPTER: "direct" },
        silent: "passed-only" as const,
        testTimeout: BETTER_AUTH_TEST_TIMEOUT_MS,
      },
    },
    {
      extends: true,
      // A representative subset on PostgreSQL (a server started by the tests); every file with
      // BETTER_AUTH_TESTS=all BETTER_AUTH_TESTS_DATABASE=postgres.
      test: {
        name: "better-auth-postgres",
        include: POSTGRES_SUBSET,
        env: { BETTER_AUTH_TESTS_DATABASE: "postgres" },
        silent: "passed-only" as const,
        testTimeout: BETTER_AUTH_TEST_TIMEOUT_MS,
      },
    },
  ];
}

/** `service-auth/*` resolves to the TypeScript sources in this repository, never to dist/ (docs/decisions.md 18). */
const SOURCE_CONDITION = "service-auth-source";

export default defineConfig({
  resolve: {
    conditions: [SOURCE_CONDITION, ...defaultClientConditions],
    alias: {
      // Better Auth's own tests import its source modules; these are their built forms.
      "better-auth-dist": realpathSync("node_modules/better-auth/dist"),
    },
  },
  // Without the bundlers' `module` condition, which vitest also passes to Node (`--conditions`):
  // packages then load in tests as Node loads them in production. OpenTelemetry's `module` builds
  // import without file extensions, which only a bundler resolves (prom-client requires the API).
  ssr: {
    resolve: { conditions: [SOURCE_CONDITION, ...defaultServerConditions.filter((c) => c !== "module")] },
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    setupFiles: ["test/setup.ts"],
    globalSetup: ["test/global-setup.ts"],
    server: {
      deps: {
        // Better Auth's Next.js integration imports `next/headers` without an extension, which
        // only a bundler resolves (Next.js has no exports map); vite resolves it when inlined.
        inline: [/better-auth\/dist\/integrations\/next-js\.mjs$/],
      },
    },
    projects: [
      {
        extends: true,
        test: {
          name: "service-auth",
          include: ["test/**/*.test.ts", "test/**/*.test.tsx"],
          exclude: [
            ...configDefaults.exclude,
            "test/better-auth/**",
            ...(ON_PINNED_LINE ? NEXT_LINE_ONLY : [...PINNED_LINE_ONLY, ...PLATFORM_ONLY]),
          ],
        },
      },
      // Better Auth 1.4.9's own tests assert 1.4.9's behaviour through its internals
      // (`better-auth-dist/…` module paths, error-code constants, which 1.7 turned into objects with
      // `defineErrorCodes`, routes and messages that changed). On the newest patched line they would
      // measure the version difference, not our adapters, so they run on the pinned line only; there
      // 1.7's own adapter suites (`*.next.test.ts`, auth flows included) cover the adapters.
      ...(ON_PINNED_LINE ? betterAuthOwnTests() : []),
    ],
  },
});
