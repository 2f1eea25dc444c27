/**
 * `schema check [--all]`: the start's schema check, on demand, with its report.
 * `migrate`: lists the app's migrations and where each stands; `migrate NAME [--dry-run]
 * [--batch N]` runs (or resumes) one.
 */
import { dryRunMigration, migrationProgress, runMigration } from "../evolution/migration-runner.ts";
import { checkStoredDocuments, describeViolation, SCHEMA_FIX_HINT } from "../evolution/stored-check.ts";
import { closeMatches } from "../functions/close-matches.ts";
import type { BackendRuntime } from "../runtime.ts";
import type { RuntimeServiceOptions } from "../service.ts";
import { UsageError } from "./run-command.ts";

interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
}

function batchOption(args: string[]): number | undefined {
  const at = args.indexOf("--batch");
  if (at < 0) return undefined;
  const n = Number(args[at + 1]);
  if (!Number.isInteger(n) || n < 1) throw new UsageError("--batch needs a whole number of documents");
  return n;
}

export async function schemaCommand(backend: BackendRuntime, args: string[], io: Io): Promise<number> {
  const [sub, ...flags] = args;
  if (sub !== "check") throw new UsageError(`unknown command: schema ${sub ?? ""}`.trim());
  const report = await checkStoredDocuments(backend, {
    all: flags.includes("--all"),
    batchSize: batchOption(flags),
  });
  io.stderr(
    `schema check: ${report.checked.length} table(s) read (${report.documents} documents), ` +
      `${report.unchanged.length} unchanged since verified\n`,
  );
  if (report.violations.length === 0) {
    io.stdout("stored documents match the schema\n");
    return 0;
  }
  for (const v of report.violations) io.stdout(`${describeViolation(v)}\n`);
  io.stdout(`${SCHEMA_FIX_HINT}\n`);
  return 1;
}

export async function migrateCommand(
  backend: BackendRuntime,
  app: RuntimeServiceOptions,
  args: string[],
  io: Io,
): Promise<number> {
  const migrations = app.migrations ?? {};
  const name = args.find((a, i) => !a.startsWith("--") && args[i - 1] !== "--batch");
  if (!name) {
    const names = Object.keys(migrations);
    if (names.length === 0) io.stderr("this app defines no migrations (ServiceOptions.migrations)\n");
    for (const n of names) {
      const p = await migrationProgress(backend, n);
      const state = !p ? "not run" : p.finishedAt !== undefined ? "done" : "interrupted";
      io.stdout(
        `${n}\t${migrations[n].table}\t${state}${p ? `\t${p.processed} processed, ${p.changed} changed` : ""}\n`,
      );
    }
    return 0;
  }
  if (!Object.hasOwn(migrations, name)) {
    const near = closeMatches(name, Object.keys(migrations));
    throw new UsageError(`no migration "${name}"${near.length ? ` (did you mean ${near.join(", ")}?)` : ""}`);
  }
  const migration = migrations[name];
  const batchSize = batchOption(args);
  if (args.includes("--dry-run")) {
    const result = await dryRunMigration(backend, name, migration, { batchSize });
    io.stdout(`${JSON.stringify({ dryRun: true, ...result }, null, 2)}\n`);
    return result.invalidAfter > 0 ? 1 : 0;
  }
  const result = await runMigration(backend, name, migration, {
    batchSize,
    onBatch: (p) => io.stderr(`${name}: ${p.processed} documents processed, ${p.changed} changed\n`),
  });
  if (result.resumedAfter > 0 && result.status === "done")
    io.stderr(`${name}: resumed after ${result.resumedAfter} documents processed by an earlier run\n`);
  if (result.status === "already-done") io.stderr(`${name}: already done; nothing changed\n`);
  io.stdout(`${JSON.stringify(result, null, 2)}\n`);
  return 0;
}
