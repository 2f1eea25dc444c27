/**
 * `cli backup FILE [--force]` and `cli restore FILE [--force]` for the database `DATABASE_URL`
 * names. They never start the backend: a backup changes nothing, and a restore replaces what a
 * migration would read.
 *
 * SQLite: done here (`storage/sqlite-backup.ts`): online, consistent, the server may keep running
 * during a backup; a restore refuses while any process has the database open.
 * PostgreSQL: `pg_dump` / `pg_restore` when on PATH, else the exact command is printed. The
 * password goes to them through PGPASSWORD, never on a command line or in printed output.
 *
 * Backups hold SERVICE_AUTH_SECRET and the signing keys: files are created with mode 0600.
 */
import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync, renameSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import { databaseTarget } from "../storage/open.ts";
import { BackupRefused, backupSqlite, restoreSqlite } from "../storage/sqlite/backup.ts";

export const BACKUP_USAGE = `  service-auth backup FILE [--force]     (consistent copy of the database, even while the server runs)
  service-auth restore FILE [--force]    (replaces the database: stop every server first)`;

export { BackupRefused };

/** Runs `backup` or `restore`; returns the exit code. Throws `BackupRefused` with the reason. */
export async function backupCommand(command: "backup" | "restore", args: string[]): Promise<number> {
  const force = args.includes("--force");
  const files = args.filter((a) => !a.startsWith("--"));
  if (files.length !== 1) throw new BackupRefused(`${command} needs one FILE`);
  const file = resolve(files[0]);
  const target = databaseTarget(process.env.DATABASE_URL);
  if (target.kind === "sqlite") {
    if (command === "backup") {
      const bytes = backupSqlite(target.filename, file, { force });
      process.stderr.write(`backed up ${target.filename} to ${file} (${bytes} bytes, mode 0600)\n`);
    } else {
      restoreSqlite(file, target.filename, { force });
      process.stderr.write(`restored ${target.filename} from ${file}\n`);
    }
    return 0;
  }
  return command === "backup"
    ? pgBackup(target.connectionString, file, force)
    : pgRestore(target.connectionString, file, force);
}

/** A libpq invocation: arguments without the password, which travels in `env`. */
interface PgCommand {
  tool: "pg_dump" | "pg_restore";
  args: string[];
  password: string | undefined;
}

/** `connectionString` without its password, and the password. */
function splitPassword(connectionString: string): { url: string; password: string | undefined } {
  const url = new URL(connectionString);
  const password = url.password ? decodeURIComponent(url.password) : undefined;
  url.password = "";
  return { url: url.toString(), password };
}

function pgDump(connectionString: string, out: string): PgCommand {
  const { url, password } = splitPassword(connectionString);
  return {
    tool: "pg_dump",
    args: ["--format=custom", "--no-owner", "--no-privileges", `--file=${out}`, `--dbname=${url}`],
    password,
  };
}

function pgRestoreCommand(connectionString: string, from: string): PgCommand {
  const { url, password } = splitPassword(connectionString);
  return {
    tool: "pg_restore",
    args: [
      "--clean",
      "--if-exists",
      "--no-owner",
      "--no-privileges",
      "--single-transaction",
      "--exit-on-error",
      `--dbname=${url}`,
      from,
    ],
    password,
  };
}

const quote = (arg: string) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`);

/** The command as a shell line, for people to run themselves (no password in it). */
function printable(command: PgCommand): string {
  return [command.tool, ...command.args].map(quote).join(" ");
}

/** Runs `command`; `undefined` when the tool is not on PATH, else its exit code. */
function run(command: PgCommand): Promise<number | undefined> {
  return new Promise((done, fail) => {
    const env = { ...process.env };
    if (command.password !== undefined) env.PGPASSWORD = command.password;
    const child = spawn(command.tool, command.args, { stdio: ["ignore", "inherit", "inherit"], env });
    child.once("error", (error: NodeJS.ErrnoException) =>
      error.code === "ENOENT" ? done(undefined) : fail(error),
    );
    child.once("exit", (code, signal) => done(code ?? (signal ? 1 : 0)));
  });
}

function notOnPath(command: PgCommand): number {
  process.stderr.write(
    `${command.tool} is not on PATH; run this (the password from PGPASSWORD or ~/.pgpass):\n`,
  );
  process.stdout.write(`${printable(command)}\n`);
  return 1;
}

async function pgBackup(connectionString: string, out: string, force: boolean): Promise<number> {
  if (existsSync(out) && !force) throw new BackupRefused(`${out} exists; add --force to replace it`);
  const partial = `${out}.partial`;
  rmSync(partial, { force: true });
  // pg_dump truncates the file it is given and keeps its mode: create it private first.
  closeSync(openSync(partial, "wx", 0o600));
  const code = await run(pgDump(connectionString, partial));
  if (code !== 0) {
    rmSync(partial, { force: true });
    return code === undefined ? notOnPath(pgDump(connectionString, out)) : code;
  }
  renameSync(partial, out);
  process.stderr.write(`backed up the PostgreSQL database to ${out} (mode 0600)\n`);
  return 0;
}

async function pgRestore(connectionString: string, from: string, force: boolean): Promise<number> {
  if (!existsSync(from)) throw new BackupRefused(`no backup at ${from}`);
  // The database always exists on PostgreSQL: restoring drops and recreates its tables.
  if (!force)
    throw new BackupRefused("restoring replaces the database's tables: stop every server, then add --force");
  const command = pgRestoreCommand(connectionString, from);
  const code = await run(command);
  if (code === undefined) return notOnPath(command);
  if (code === 0) process.stderr.write(`restored the PostgreSQL database from ${from}\n`);
  return code;
}
