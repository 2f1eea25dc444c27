/**
 * The tests Stryker runs: by default the in-process suites of the mutated modules (tests that spawn
 * processes or browsers cannot report per-test coverage to Stryker and would only slow it down).
 * `npm run mutate` (scripts/mutate.ts) narrows them per mutated file with `MUTATE_TEST_FILES`
 * (comma-separated): narrowing here rather than with Stryker's `--testFiles` keeps static mutants
 * (module-level constants) working, which 9.6.1 activates too late under `--testFiles`
 * (stryker-js#6144), so they would all survive.
 */
import { defaultClientConditions, defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

const SOURCE_CONDITION = "service-auth-source";

export default defineConfig({
  resolve: { conditions: [SOURCE_CONDITION, ...defaultClientConditions] },
  ssr: { resolve: { conditions: [SOURCE_CONDITION, ...defaultServerConditions] } },
  test: {
    include: process.env.MUTATE_TEST_FILES?.split(",") ?? [
      "test/backend/jwt-verifier.test.ts",
      "test/backend/authenticator.test.ts",
      "test/backend/identity-cache.test.ts",
      "test/backend/identity-cache-rotation.test.ts",
      "test/backend/remote-jwks-outage.test.ts",
      "test/sync/*.test.ts",
      "test/auth/where/*.test.ts",
      "test/auth/data-functions.test.ts",
      "test/auth/adapter-conformance.test.ts",
      "test/auth/helpers.test.ts",
      "test/auth/password.test.ts",
    ],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Under Stryker this is overridden: its vitest runner runs `pool: "threads"` with one worker;
    // `isolate` stays on, so each test file loads the (instrumented) modules afresh, and the active
    // mutant is set before the file's own `beforeAll` runs (servers it starts run the mutant).
    pool: "forks",
    setupFiles: ["test/setup.ts"],
  },
});
