/**
 * The `auth` command of the platform CLI (`npm run cli -- auth generate [FILE]`). The platform
 * knows nothing of auth: an application exports `commands = { auth: authCommand(…) }` from its app
 * module and the CLI runs it.
 */
import { existsSync, writeFileSync } from "node:fs";
import type { Backend } from "service-auth/server";
import { type AuthExtensions, defineAuthTables } from "./schema/auth-schema.ts";
import { authTablesSource } from "./schema/source.ts";
import type { AuthSchemaOptions } from "./schema/table-specs.ts";

/**
 * What an application command gets: its arguments and where to write.
 *
 * @example
 * ```ts
 * import { authCommand, type CommandIo } from "service-auth/auth";
 *
 * // An io that collects a command's output, e.g. in a test.
 * const out: string[] = [];
 * const io: CommandIo = { stdout: (text) => out.push(text), stderr: (text) => process.stderr.write(text) };
 * const code = await authCommand(authSchemaOptions)(["generate"], io);
 * ```
 */
export interface CommandIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

/**
 * An application-provided CLI command: resolves to the process exit code. `openBackend` starts
 * the app's backend on the CLI's database (for commands that read or write it).
 *
 * @example
 * ```ts
 * import type { AppCommand } from "service-auth/auth";
 *
 * // app.ts `commands`: `npm run cli -- users` prints the number of users.
 * const usersCommand: AppCommand = async (args, io, openBackend) => {
 *   if (!openBackend) return 1;
 *   const backend = await openBackend();
 *   const { value } = await backend.runQuery(api.users.count, {});
 *   io.stdout(`${value}\n`);
 *   return 0;
 * };
 * export const commands = { users: usersCommand };
 * ```
 */
export type AppCommand = (
  args: string[],
  io: CommandIo,
  openBackend?: () => Promise<Backend>,
) => Promise<number>;

const USAGE = `usage:
  cli auth generate [FILE] [--force]   (the auth tables of the app's Better Auth options; stdout without FILE)`;

/**
 * The `auth` command for an app whose auth tables come from `options` (the same plugins and
 * `user`/`session`/… options its `betterAuth` gets) and `extensions`.
 *
 * @example
 * ```ts
 * // app.ts: `npm run cli -- auth generate [FILE]` prints (or writes) the auth tables.
 * import { authCommand } from "service-auth/auth";
 * import { authSchemaOptions } from "./auth-options.ts";
 *
 * export const commands = {
 *   auth: authCommand(authSchemaOptions, { user: { indexes: { username: ["username"] } } }),
 * };
 * ```
 */
export function authCommand(options: AuthSchemaOptions, extensions?: AuthExtensions): AppCommand {
  return async (args, io) => {
    const [sub, ...rest] = args;
    if (sub !== "generate") {
      io.stderr(`${USAGE}\n`);
      return 2;
    }
    const file = rest.find((a) => !a.startsWith("--"));
    const source = authTablesSource(
      defineAuthTables(options, extensions) as Record<string, any>,
      "npm run cli -- auth generate",
    );
    if (!file) {
      io.stdout(source);
      return 0;
    }
    if (existsSync(file) && !rest.includes("--force")) {
      io.stderr(`${file} exists; pass --force to overwrite it\n`);
      return 1;
    }
    writeFileSync(file, source);
    io.stderr(`wrote ${file}\n`);
    return 0;
  };
}
