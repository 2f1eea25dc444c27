/**
 * `npm run mutate`: StrykerJS over the security core, one source file at a time, each against only
 * the test files that exercise it. Stryker's own per-test coverage then runs a handful of tests
 * per mutant instead of every suite that happens to import the file (the broad run was estimated at
 * ~24 s per mutant; narrowed, 0.3–2 s). Each file keeps its results in an incremental file in a
 * cache outside git (node_modules/.cache/service-auth-mutate/, or `MUTATE_CACHE_DIR`), so a later
 * run on the same checkout re-tests only mutants whose code or covering tests changed; a fresh
 * clone starts from nothing. Every run (and `--summary`) writes the scores to
 * reports/mutation/scores.md (git-ignored), the generated report docs/mutation-testing.md points to. Stryker runs vitest through scripts/stryker-vitest-file-failures.mjs,
 * so a test file that fails outside its tests (import, `beforeAll`) kills the mutant.
 *
 * Usage (docs/mutation-testing.md):
 *   npm run mutate                          every file in TARGETS
 *   npm run mutate -- jwt-verifier          the targets whose path contains "jwt-verifier"
 *   npm run mutate -- src/backend/auth/jwt-verifier.ts:234-260   a line range (not incremental)
 *   npm run mutate -- src/backend/sync/reactor.ts   a file not in TARGETS: the related suites of
 *                                           stryker.vitest.config.ts (slow)
 *   npm run mutate -- --summary             the scores in the incremental files (and the report), no run
 * Any other `--flag` goes to `stryker run` (e.g. `--force` to re-test everything); give a flag's
 * value after `=` (`--logLevel=debug`), as a separate word it would be read as a target.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/** Each mutated file and the test files that exercise it directly. */
const TARGETS: Readonly<Record<string, readonly string[]>> = {
  "src/backend/auth/jwt-verifier.ts": ["test/backend/jwt-verifier.test.ts"],
  "src/backend/auth/authenticator.ts": [
    "test/backend/authenticator.test.ts",
    "test/backend/identity-cache-rotation.test.ts",
  ],
  "src/backend/auth/jwks-source.ts": [
    "test/backend/jwks-source.test.ts",
    "test/backend/jwt-verifier.test.ts",
    "test/backend/remote-jwks-outage.test.ts",
  ],
  "src/backend/auth/token-clock.ts": ["test/backend/jwt-verifier.test.ts"],
  "src/backend/auth/identity-cache.ts": [
    "test/backend/identity-cache.test.ts",
    "test/backend/identity-cache-rotation.test.ts",
  ],
  "src/auth/identity.ts": ["test/auth/identity.test.ts"],
  "src/backend/sync/identity-watch.ts": ["test/sync/identity-watch.test.ts"],
  "src/auth/where/match.ts": [
    "test/auth/where/match.test.ts",
    "test/auth/where/value-order.test.ts",
    "test/auth/where/case-insensitive.test.ts",
  ],
  "src/auth/where/clause.ts": ["test/auth/where/clause.test.ts", "test/auth/where/case-insensitive.test.ts"],
  // Not the where fuzz test: 600 queries per mutant (~6 s each under load), and it only checks answers.
  "src/auth/where/plan.ts": ["test/auth/where/plan.test.ts", "test/auth/where/value-order.test.ts"],
  // Only tests that run no where before their first test (see the seed in execute.test.ts).
  "src/auth/where/execute.ts": ["test/auth/where/execute.test.ts"],
  "src/auth/data/validators.ts": ["test/auth/data/validators.test.ts"],
  "src/auth/data/unique.ts": ["test/auth/data/unique.test.ts"],
  "src/backend/sync/limits.ts": ["test/sync/limits.test.ts", "test/sync/budget.test.ts"],
  "src/backend/sync/budget.ts": ["test/sync/budget.test.ts"],
  "src/backend/sync/connection-identity.ts": [
    "test/sync/auth.test.ts",
    "test/sync/connection-identity.test.ts",
    "test/sync/identity-watch.test.ts",
    "test/sync/protocol.test.ts",
    "test/postgres/websocket-revocation.test.ts",
  ],
  "src/protocol/messages.ts": ["test/protocol/parse-client-message.test.ts"],
  // Its own file: each test starts its service, so what attachSync sets up is covered per test.
  "src/backend/sync/server.ts": ["test/sync/server.test.ts", "test/sync/upgrade-reset.test.ts"],
  // The dispatcher: its budget, auth gate and handshake paths are each tested in their own file.
  "src/backend/sync/connection.ts": [
    "test/sync/connection.test.ts",
    "test/sync/protocol.test.ts",
    "test/sync/budget.test.ts",
    "test/sync/auth.test.ts",
    "test/sync/connection-identity.test.ts",
  ],
  "src/backend/sync/connection-calls.ts": [
    "test/sync/protocol.test.ts",
    "test/sync/reactivity.test.ts",
    "test/sync/server.test.ts",
    "test/sync/auth.test.ts",
    "test/sync/connection-identity.test.ts",
  ],
  "src/backend/sync/connection-subscriptions.ts": [
    "test/sync/connection.test.ts",
    "test/sync/protocol.test.ts",
    "test/sync/budget.test.ts",
    "test/sync/reactivity.test.ts",
    "test/sync/auth.test.ts",
    "test/sync/connection-identity.test.ts",
  ],
  // Driven directly with a real backend and no sockets (~60 ms for the whole file).
  "src/backend/sync/reactor.ts": ["test/sync/reactor.test.ts", "test/sync/identity-watch.test.ts"],
  "src/backend/sync/query-group.ts": ["test/sync/reactor.test.ts"],
  "src/auth/rate-limit/rules.ts": ["test/auth/rate-limit-defaults.test.ts"],
  "src/auth/rate-limit/keys.ts": [
    "test/auth/rate-limit-keys.test.ts",
    "test/auth/rate-limit-defaults.test.ts",
  ],
  "src/auth/rate-limit/store.ts": [
    "test/auth/rate-limit-store.test.ts",
    "test/auth/rate-limit-defaults.test.ts",
  ],
  "src/auth/rate-limit/memory-store.ts": ["test/auth/rate-limit-defaults.test.ts"],
  "src/auth/rate-limit/database-store.ts": [
    "test/auth/rate-limit-database.test.ts",
    "test/auth/rate-limit-shared.test.ts",
  ],
  "src/auth/fresh-session.ts": ["test/auth/sensitive-sessions.test.ts"],
  "src/auth/password.ts": ["test/auth/password.test.ts"],
  "src/auth/password-prehash.ts": [
    "test/auth/password-prehash-hooks.test.ts",
    "test/auth/password-prehash.test.ts",
  ],
  "src/auth/advisories/refuse.ts": ["test/auth/advisories/refuse.test.ts"],
  "src/auth/advisories/second-factor.ts": [
    "test/auth/advisories/second-factor.test.ts",
    "test/auth/advisories/two-factor.test.ts",
  ],
  "src/auth/advisories/plugin.ts": [
    "test/auth/advisories/account-linking.test.ts",
    "test/auth/advisories/invitations.test.ts",
    "test/auth/advisories/magic-link-token.test.ts",
    "test/auth/advisories/pre-account-hijacking.test.ts",
    "test/auth/advisories/sessions.test.ts",
    "test/auth/advisories/two-factor.test.ts",
  ],
  "src/auth/keys/stored-jwks.ts": ["test/auth/stored-jwks.test.ts"],
  "src/auth/keys/functions.ts": ["test/auth/key-functions.test.ts"],
  "src/auth/run-as.ts": ["test/auth/run-as.test.ts"],
  "src/auth/data/create.ts": ["test/auth/data/writes.test.ts"],
  "src/auth/data/update.ts": ["test/auth/data/writes.test.ts"],
  "src/auth/data/delete.ts": ["test/auth/data/writes.test.ts"],
  // The adapters value by value, Better Auth 1.4.9's own adapter suite on both, and the data functions.
  "src/auth/adapter.ts": [
    "test/auth/adapter.test.ts",
    "test/auth/adapter-conformance.test.ts",
    "test/auth/data-functions.test.ts",
  ],
  "src/auth/schema/user-field-limits.ts": ["test/auth/user-field-limits.test.ts"],
  "src/auth/http.ts": ["test/auth/http-middleware.test.ts"],
  "src/auth/plugins/backend/claims.ts": ["test/auth/claims.test.ts", "test/auth/plugin.test.ts"],
  "src/auth/current-user.ts": ["test/auth/current-user-ctx.test.ts", "test/auth/current-user.test.ts"],
  // The read side of the Better Auth data layer and its shared helpers: all in-process SQLite suites.
  "src/auth/data/find.ts": ["test/auth/data/reads.test.ts", "test/auth/data-functions.test.ts"],
  "src/auth/data/count.ts": ["test/auth/data/reads.test.ts", "test/auth/data-functions.test.ts"],
  "src/auth/data/documents.ts": [
    "test/auth/data/reads.test.ts",
    "test/auth/data/writes.test.ts",
    "test/auth/data/unique.test.ts",
  ],
  "src/auth/data/models.ts": [
    "test/auth/data/reads.test.ts",
    "test/auth/data/validators.test.ts",
    "test/auth/data/unique.test.ts",
  ],
  "src/auth/data/writer.ts": ["test/auth/data/writes.test.ts"],
  "src/auth/data/functions.ts": [
    "test/auth/data-functions.test.ts",
    "test/auth/data/operations.test.ts",
    "test/auth/data/validators.test.ts",
    "test/auth/data/writes.test.ts",
    "test/auth/data/reads.test.ts",
  ],
  "src/auth/data/operations.ts": [
    "test/auth/data/operations.test.ts",
    "test/auth/data/validators.test.ts",
    "test/auth/data-functions.test.ts",
  ],
  // Who may call the admin console's queries: its unit test, and the example app's access test.
  "src/auth/admin/functions.ts": ["test/admin/admin-functions.test.ts", "test/admin/admin-access.test.ts"],
  // The backend plugin: its rules as functions, then through Better Auth's routes (an app per file).
  "src/auth/plugins/backend/index.ts": ["test/auth/plugin-rules.test.ts", "test/auth/plugin.test.ts"],
};

/**
 * Stryker's incremental files: a cache (6 MB of JSON for every target), not a result, so not in git.
 * Kept per checkout, where `npm ci` does not remove it.
 */
const INCREMENTAL_DIR = process.env.MUTATE_CACHE_DIR ?? "node_modules/.cache/service-auth-mutate";

/** The generated report: one line per mutated file (git-ignored, regenerated by every run). */
const REPORT_FILE = "reports/mutation/scores.md";

/** `src/backend/auth/jwt-verifier.ts` → `<cache>/backend-auth-jwt-verifier.json` */
function incrementalFile(source: string): string {
  const slug = source
    .replace(/^src\//, "")
    .replace(/\.tsx?$/, "")
    .replaceAll("/", "-");
  return `${INCREMENTAL_DIR}/${slug}.json`;
}

interface Run {
  mutate: string;
  testFiles?: readonly string[];
  incremental?: string;
}

/** What the command line asks for: targets by substring, files or line ranges by path. */
function plan(selectors: string[]): Run[] {
  if (selectors.length === 0) {
    return Object.entries(TARGETS).map(([file, tests]) => ({
      mutate: file,
      testFiles: tests,
      incremental: incrementalFile(file),
    }));
  }
  return selectors.flatMap((selector): Run[] => {
    const [file, range] = selector.split(":");
    if (existsSync(file)) {
      // A line range would overwrite the file's incremental results with a part of them.
      return [
        {
          mutate: selector,
          testFiles: TARGETS[file],
          incremental: range ? undefined : incrementalFile(file),
        },
      ];
    }
    const matches = Object.keys(TARGETS).filter((f) => f.includes(selector));
    if (matches.length === 0)
      throw new Error(`mutate: no file or target matches ${JSON.stringify(selector)}`);
    return matches.map((f) => ({ mutate: f, testFiles: TARGETS[f], incremental: incrementalFile(f) }));
  });
}

function strykerArgs(run: Run, passThrough: string[]): string[] {
  const args = ["run", "--mutate", run.mutate];
  if (run.incremental) args.push("--incremental", "--incrementalFile", run.incremental);
  return [...args, ...passThrough];
}

/** Mutation score per file of a Stryker JSON report: (killed + timeout) / valid mutants. */
function scores(reportFile: string): string[] {
  const report = JSON.parse(readFileSync(reportFile, "utf8")) as {
    files: Record<string, { mutants: { status: string }[] }>;
  };
  return Object.entries(report.files).map(([file, { mutants }]) => {
    const count = (status: string) => mutants.filter((m) => m.status === status).length;
    const detected = count("Killed") + count("Timeout");
    const valid = detected + count("Survived") + count("NoCoverage");
    const score = valid === 0 ? "n/a" : `${((100 * detected) / valid).toFixed(1)} %`;
    return `${file}: ${score} (${detected}/${valid} detected, ${count("Survived")} survived, ${count("NoCoverage")} not covered)`;
  });
}

/** Prints the scores of every target and writes them to the report. */
function summary(): void {
  const lines = Object.keys(TARGETS).flatMap((file) => {
    const results = incrementalFile(file);
    return existsSync(results) ? scores(results) : [`${file}: not run yet on this checkout`];
  });
  console.log(lines.join("\n"));
  mkdirSync(dirname(REPORT_FILE), { recursive: true });
  writeFileSync(
    REPORT_FILE,
    [
      "# Mutation scores (generated by `npm run mutate`; do not edit)",
      "",
      `Written ${new Date().toISOString()} from the incremental results in ${INCREMENTAL_DIR}.`,
      "Score = (killed + timed out) / (killed + timed out + survived + not covered).",
      "",
      ...lines.map((line) => `- ${line}`),
      "",
    ].join("\n"),
  );
  console.log(`\nreport: ${REPORT_FILE}`);
}

function main(argv: string[]): number {
  if (argv.includes("--summary")) {
    summary();
    return 0;
  }
  const selectors = argv.filter((a) => !a.startsWith("-"));
  const passThrough = argv.filter((a) => a.startsWith("-"));
  for (const run of plan(selectors)) {
    console.log(`\n== mutate ${run.mutate} against ${run.testFiles?.join(", ") ?? "the related suites"}`);
    // Stryker is one test runner (concurrency 1 in stryker.config.json); nice keeps the machine usable.
    // The tests are narrowed in stryker.vitest.config.ts (see there why not with `--testFiles`).
    const env = run.testFiles ? { ...process.env, MUTATE_TEST_FILES: run.testFiles.join(",") } : process.env;
    const result = spawnSync(
      "nice",
      ["-n", "10", "node_modules/.bin/stryker", ...strykerArgs(run, passThrough)],
      {
        stdio: "inherit",
        env,
      },
    );
    if (result.status !== 0) return result.status ?? 1;
  }
  summary();
  return 0;
}

process.exitCode = main(process.argv.slice(2));
