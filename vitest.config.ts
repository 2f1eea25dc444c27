import { realpathSync } from "node:fs";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    alias: {
      // Better Auth's own tests (test/better-auth) import its source modules; these are their built forms.
      "better-auth-dist": realpathSync("node_modules/better-auth/dist"),
    },
  },
  test: {
    include: ["test/**/*.test.ts", "test/**/*.test.tsx"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    setupFiles: ["test/setup.ts"],
  },
});
