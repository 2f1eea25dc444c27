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

/** What an application command gets: its arguments and where to write. */
export interface CommandIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

/**
 * An application-provided CLI command: resolves to the process exit code. `openBackend` starts
 * the app's backend on the CLI's database (for commands that read or write it).
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
