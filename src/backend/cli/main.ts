/**
 * The CLI's commands (`service-auth <command>`, `npm run cli -- <command>` in this repository; bin.ts
 * is the entry):
 *   env list (secrets masked) | get NAME | set NAME [VALUE] | remove NAME | sync [FILE] [--auth]
 *   run [--as <email|userId>] <module:function> [json-args]
 *   <command> …   (a command the app module exports in `commands`, e.g. `auth generate`)
 *   backup FILE [--force] | restore FILE [--force]   (see backup.ts)
 *   schema check [--all] | migrate [NAME [--dry-run] [--batch N]]   (see schema-commands.ts)
 * Results go to stdout (a string as it is, anything else as JSON); logs and errors to stderr.
 * The app is loaded from $SERVICE_APP (default ./app.ts or ./app.mjs, else examples/app); storage from $DATABASE_URL.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseEnvFile } from "../env/store.ts";
import { isAppError } from "../errors.ts";
import { forgetChangedVerifications } from "../evolution/stored-check.ts";
import { BackendRuntime } from "../runtime.ts";
import type { RuntimeServiceOptions } from "../service.ts";
import { maskSettingValue } from "../settings/mask.ts";
import { StartRefusal } from "../start-refusal.ts";
import { openEngine } from "../storage/open.ts";
import { APP_FILES, appFile, exportedApp } from "./app-file.ts";
import { BACKUP_USAGE, BackupRefused, backupCommand } from "./backup.ts";
import { JOBS_USAGE, jobsCommand } from "./jobs.ts";
import { asksForHelp, hideSecrets, runCommand, runHelp, SHOW_SECRETS, UsageError } from "./run-command.ts";
import { migrateCommand, schemaCommand } from "./schema-commands.ts";

/** The app module without `SERVICE_APP`: this repository's example. */
const DEFAULT_APP = "examples/app/app.ts";

export const USAGE = `usage:
  service-auth init [DIR] [--package SPEC]
                                         (a new app in DIR: tables, a query, a mutation,
                                          sign-in, a page, a test; SPEC: what it depends on)
  service-auth start [APP]               (serves the app: APP is its module or folder, default
                                          the current folder's app.ts / app.mjs; every setting
                                          checked at start)
  service-auth dev [APP]                 (the same, restarted on changes; type errors beside it)
  service-auth env list                  (names and values, secrets masked)
  service-auth env get NAME              (one value, in full)
  service-auth env set NAME [VALUE]      (reads VALUE from stdin when omitted)
  service-auth env remove NAME
  service-auth env sync [FILE] [--auth]  (FILE defaults to .env; --auth generates missing auth secrets)
  service-auth run [--as <email|userId>] [--show-secrets] <module:function> [json-args]
                                         (--as: as that user, through a real session and token;
                                          private keys and secrets in the value are hidden on a
                                          terminal unless --show-secrets; run FN --help: its arguments)
  service-auth schema check [--all]      (stored documents against the schema: the tables whose
                                          validator changed since a start verified them; --all:
                                          every table; exit 1 on a violation)
  service-auth migrate                   (the app's migrations and where each stands)
  service-auth migrate NAME [--dry-run] [--batch N]
                                         (runs or resumes an online migration; --dry-run counts
                                          the documents it would change, exit 1 if any would be
                                          refused)
  service-auth <command> ...             (commands the app module exports, e.g. auth generate)
${JOBS_USAGE}
${BACKUP_USAGE}
  service-auth --help                    (this list)
The app is loaded from $SERVICE_APP (default ./app.ts or ./app.mjs, else examples/app); storage from $DATABASE_URL.`;

/** The line after a usage error. */
export const USAGE_HINT = "(service-auth --help lists every command)";

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
}

function print(value: unknown): void {
  process.stdout.write(typeof value === "string" ? `${value}\n` : `${JSON.stringify(value, null, 2)}\n`);
}

/**
 * A command an app module exports in `commands` (e.g. `auth` from the auth integration): the
 * platform runs it without knowing what it does. It starts no backend unless the command asks
 * for one with `openBackend` (closed by the CLI when the command ends).
 */
type AppCommand = (
  args: string[],
  io: { stdout(text: string): void; stderr(text: string): void },
  openBackend: () => Promise<BackendRuntime>,
) => Promise<number>;

/** The app module cannot be found: how to point the CLI at one. */
export class AppNotFound extends Error {
  override name = "AppNotFound";
}

async function loadApp(): Promise<{ app: RuntimeServiceOptions; commands: Record<string, AppCommand> }> {
  const named = process.env.SERVICE_APP;
  // Without SERVICE_APP: the app module of the current folder (app.ts, app.mjs…), else the example.
  const file = named ? appFile(named) : (appFile(undefined) ?? appFile(DEFAULT_APP));
  if (!file) {
    const where = resolve(named ?? DEFAULT_APP);
    throw new AppNotFound(
      named
        ? `SERVICE_APP names ${where}, which does not exist.\nPoint it at your app's module (the one exporting its definition), e.g. SERVICE_APP=app.mjs npx service-auth ${"<command>"}`
        : `no app module: SERVICE_APP is not set, and neither ./${APP_FILES.join(", ./")} nor ${where} (this repository's example) exists here.\nRun the CLI in your app's folder, or point it at your app's module, e.g. SERVICE_APP=app.mjs npx service-auth <command>`,
    );
  }
  const mod = await import(pathToFileURL(file).href);
  const app = exportedApp(mod) as
    | (RuntimeServiceOptions & { commands?: Record<string, AppCommand> })
    | undefined;
  if (!app) throw new Error(`${file} exports no app (a default export or "app")`);
  return { app, commands: (mod.commands ?? app.commands ?? {}) as Record<string, AppCommand> };
}

export async function main(argv: string[]): Promise<number> {
  const [group, sub, ...rest] = argv;
  if (!group || group === "help" || group === "--help" || group === "-h") {
    (group ? process.stdout : process.stderr).write(`${USAGE}\n`);
    return group ? 0 : 2;
  }
  // Before the backend starts: neither needs the app, and neither may migrate the database.
  if (group === "backup" || group === "restore") return backupCommand(group, [sub, ...rest].filter(Boolean));
  const { app, commands } = await loadApp();
  const platformGroups = ["run", "env", "jobs", "schema", "migrate"];
  if (!platformGroups.includes(group) && Object.hasOwn(commands, group)) {
    let opened: Promise<BackendRuntime> | undefined;
    const openBackend = () =>
      (opened ??= (async () => {
        const backend = new BackendRuntime({ ...app, engine: openEngine(process.env.DATABASE_URL) });
        await backend.start();
        return backend;
      })());
    try {
      return await commands[group](
        [sub, ...rest].filter((a) => a !== undefined),
        {
          stdout: (text) => process.stdout.write(text),
          stderr: (text) => process.stderr.write(text),
        },
        openBackend,
      );
    } finally {
      if (opened) await (await opened).close();
    }
  }
  const backend = new BackendRuntime({ ...app, engine: openEngine(process.env.DATABASE_URL) });
  await backend.start();
  try {
    // This process may write under a schema other than the one a start verified.
    if (group !== "schema") await forgetChangedVerifications(backend);
    const io = {
      stdout: (text: string) => process.stdout.write(text),
      stderr: (text: string) => process.stderr.write(text),
    };
    const args = [sub, ...rest].filter((a) => a !== undefined);
    if (group === "schema") return await schemaCommand(backend, args, io);
    if (group === "migrate") return await migrateCommand(backend, app, args, io);
    if (group === "run") {
      if (asksForHelp(args)) {
        print(runHelp(backend, args));
        return 0;
      }
      const value = await runCommand(backend, app, args);
      // Private keys and secrets reach a terminal only when asked for; a pipe gets the whole value
      // (`run auth:getLatestJwks | env set JWKS`).
      if (process.stdout.isTTY && !args.includes(SHOW_SECRETS)) {
        const shown = hideSecrets(value);
        print(shown.value);
        if (shown.hidden > 0)
          process.stderr.write(
            `(${shown.hidden} secret value(s) hidden on a terminal; ${SHOW_SECRETS} prints them, a pipe gets them)\n`,
          );
      } else print(value);
      return 0;
    }
    if (group === "jobs")
      return await jobsCommand(backend, sub, rest, {
        stdout: (text) => process.stdout.write(text),
        stderr: (text) => process.stderr.write(text),
      });
    if (group === "env") {
      const env = backend.env;
      switch (sub) {
        case "list": {
          // Secrets (by name) and passwords inside URLs are masked: `env get NAME` shows one in full.
          const stored = env.stored();
          for (const [name, value] of stored) print(`${name}=${maskSettingValue(name, value)}`);
          if (stored.some(([name, value]) => maskSettingValue(name, value) !== value))
            process.stderr.write("(secrets masked; `env get NAME` prints one value in full)\n");
          return 0;
        }
        case "get": {
          if (!rest[0]) throw new UsageError("env get needs a NAME");
          const value = env.stored().find(([n]) => n === rest[0])?.[1];
          if (value === undefined) {
            process.stderr.write(`${rest[0]} is not set\n`);
            return 1;
          }
          print(value);
          return 0;
        }
        case "set": {
          const [name, given] = rest;
          if (!name) throw new UsageError("env set needs a NAME");
          const value = given ?? (await readStdin());
          await env.set(name, value);
          await app.onEnvChange?.(backend, { action: "set", names: [name] });
          process.stderr.write(`set ${name}\n`);
          return 0;
        }
        case "remove": {
          if (!rest[0]) throw new UsageError("env remove needs a NAME");
          const removed = await env.remove(rest[0]);
          if (removed) await app.onEnvChange?.(backend, { action: "remove", names: [rest[0]] });
          process.stderr.write(removed ? `removed ${rest[0]}\n` : `${rest[0]} was not set\n`);
          return 0;
        }
        case "sync": {
          const auth = rest.includes("--auth");
          const file = rest.find((a) => !a.startsWith("--")) ?? ".env";
          let pairs: [string, string][] = [];
          try {
            pairs = parseEnvFile(readFileSync(file, "utf8"));
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code !== "ENOENT" || !auth) throw e;
          }
          for (const [name, value] of pairs) await env.set(name, value);
          if (pairs.length > 0)
            await app.onEnvChange?.(backend, { action: "sync", names: pairs.map(([name]) => name) });
          process.stderr.write(`synced ${pairs.length} variable(s) from ${file}\n`);
          if (auth) {
            if (!app.onAuthSync) throw new Error("This app has no auth integration to sync");
            const generated = await app.onAuthSync(backend);
            if (generated.length > 0) await app.onEnvChange?.(backend, { action: "sync", names: generated });
            process.stderr.write(
              generated.length ? `generated ${generated.join(", ")}\n` : "auth variables already set\n",
            );
          }
          return 0;
        }
      }
    }
    throw new UsageError(`unknown command: ${[group, sub].filter(Boolean).join(" ")}`);
  } finally {
    await backend.close();
  }
}

/** Prints a failed command's error (a usage error with one hint line, not the whole usage); returns the exit code. */
export function reportFailure(error: unknown): number {
  if (error instanceof UsageError) process.stderr.write(`${error.message}\n${USAGE_HINT}\n`);
  else if (error instanceof AppNotFound || error instanceof StartRefusal)
    process.stderr.write(`${error.message}\n`);
  else if (error instanceof BackupRefused) process.stderr.write(`refused: ${error.message}\n`);
  else if (isAppError(error)) process.stderr.write(`error ${error.code}: ${error.message}\n`);
  else process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  return error instanceof UsageError ? 2 : 1;
}
