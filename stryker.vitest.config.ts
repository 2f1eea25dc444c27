/**
 * The tests `npm run mutate` runs: the in-process suites of the mutated modules. Tests that spawn
 * processes or browsers cannot report per-test coverage to Stryker and would only slow it down.
 */
import { defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config.ts";

export default mergeConfig(
  base,
  defineConfig({
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
    },
  }),
);
