/**
 * The tests `npm run mutate` runs: the in-process suites of the mutated modules. Tests that spawn
 * processes or browsers cannot report per-test coverage to Stryker and would only slow it down.
 */
import { defaultClientConditions, defaultServerConditions } from "vite";
import { defineConfig } from "vitest/config";

const SOURCE_CONDITION = "service-auth-source";

export default defineConfig({
  resolve: { conditions: [SOURCE_CONDITION, ...defaultClientConditions] },
  ssr: { resolve: { conditions: [SOURCE_CONDITION, ...defaultServerConditions] } },
  test: {
    include: [
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
    pool: "forks",
    setupFiles: ["test/setup.ts"],
  },
});
