/**
 * Stryker's vitest runner (9.6.1), except that a test file that fails as a whole counts as a
 * failure. The stock runner reads only the results of single tests: when a file's module throws on
 * import (no tests are collected) or its `beforeAll` / `afterAll` throws (its tests are reported as
 * skipped, and `findSuiteError` stops at top-level tests, whose `suite` is undefined in vitest 4),
 * it sees no failed test and counts the mutant as survived, though `npx vitest run` fails on it.
 * That made every mutant in code a `beforeAll` runs (a seed through the mutated module, a server
 * the file starts) that breaks the set-up a false survivor (docs/decisions.md 21). Plain
 * JavaScript: Stryker imports plugins with Node's loader.
 *
 * Used through stryker.config.json (`plugins`, `testRunner: "vitest-file-failures"`); the options
 * stay those of the vitest runner (`vitest.configFile`).
 */
import path from "node:path";
import { commonTokens, declareFactoryPlugin, PluginKind, tokens } from "@stryker-mutator/api/plugin";
import { DryRunStatus, MutantRunStatus } from "@stryker-mutator/api/test-runner";
import { strykerPlugins as vitestPlugins } from "@stryker-mutator/vitest-runner";

const vitestFactory = vitestPlugins.find(
  (p) => p.kind === PluginKind.TestRunner && p.name === "vitest",
).factory;

/** A test runner that delegates to the vitest runner and then looks at each file's own result. */
class FileFailuresCount {
  /** Dry-run test ids by test file (relative to the sandbox, as in Stryker's ids). */
  testsByFile = new Map();

  constructor(inner) {
    this.inner = inner;
  }

  capabilities() {
    return this.inner.capabilities();
  }

  init() {
    return this.inner.init();
  }

  dispose() {
    return this.inner.dispose();
  }

  async dryRun(options) {
    const result = await this.inner.dryRun(options);
    if (result.status !== DryRunStatus.Complete) return result;
    const failed = this.failedFiles();
    // Without this the dry run "succeeds" and the file's tests just cover nothing.
    if (failed.length > 0) return { status: DryRunStatus.Error, errorMessage: describe(failed) };
    for (const test of result.tests) {
      const file = test.id.slice(0, test.id.indexOf("#"));
      this.testsByFile.set(file, [...(this.testsByFile.get(file) ?? []), test.id]);
    }
    return result;
  }

  async mutantRun(options) {
    const result = await this.inner.mutantRun(options);
    if (result.status !== MutantRunStatus.Survived) return result;
    // No test failed: a file that failed anyway failed outside its tests.
    const failed = this.failedFiles();
    if (failed.length === 0) return result;
    const wanted = options.testFilter && new Set(options.testFilter);
    const killedBy = failed
      .flatMap(({ file }) => this.testsByFile.get(file) ?? [])
      .filter((id) => !wanted || wanted.has(id));
    return {
      status: MutantRunStatus.Killed,
      failureMessage: describe(failed),
      killedBy,
      nrOfTests: result.nrOfTests,
    };
  }

  /** The files of the last run whose own result is a failure, with their first error. */
  failedFiles() {
    return this.inner.ctx.state
      .getFiles()
      .filter((file) => file.result?.state === "fail")
      .map((file) => ({
        file: path.relative(process.cwd(), file.filepath).replaceAll("\\", "/"),
        error: file.result.errors?.[0]?.message ?? "failed outside its tests",
      }));
  }
}

function describe(failed) {
  return failed.map(({ file, error }) => `${file} failed as a whole: ${error}`).join("\n");
}

createRunner.inject = tokens(commonTokens.injector);
function createRunner(injector) {
  return new FileFailuresCount(injector.injectFunction(vitestFactory));
}

export const strykerPlugins = [
  declareFactoryPlugin(PluginKind.TestRunner, "vitest-file-failures", createRunner),
];
