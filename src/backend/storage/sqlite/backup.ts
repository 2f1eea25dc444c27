/**
 * Online backup and restore of the SQLite database file, from a separate process (the CLI).
 *
 * Backup is `VACUUM INTO` on its own connection: one read transaction, so the copy is a
 * consistent snapshot holding every commit made before it began, including commits still in the
 * WAL (which a file copy loses), and WAL mode lets the running server keep writing meanwhile.
 *
 * Restore replaces the file and therefore refuses while any other connection has the database
 * open (a running server or CLI): their cached state would no longer match the file. It checks
 * by taking SQLite's exclusive lock, which no connection of a WAL database leaves free.
 *
 * The database holds `SERVICE_AUTH_SECRET` and the signing keys (`_env`): every file written
 * here is created with mode 0600.
 */
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import Database from "@service-auth/better-sqlite3";

/** A backup or restore that must not go ahead; the message says why and what to do. */
export class BackupRefused extends Error {}

/** Waits for a lock held by another connection (e.g. a long write) this long. */
const BUSY_TIMEOUT_MS = 5000;
/** The table every service-auth database has: a file without it is not a backup of ours. */
const LAYOUT_TABLE = "_layout";

/** An empty file with mode 0600 (`VACUUM INTO` accepts an empty target and keeps its mode). */
function createPrivateFile(path: string): void {
  closeSync(openSync(path, "wx", 0o600));
}

/** Flushes `path` (a file or directory) to disk. */
function sync(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Writes a consistent snapshot of `file` to `out` (0600); returns its size in bytes. */
export function backupSqlite(file: string, out: string, options: { force?: boolean } = {}): number {
  if (file === ":memory:") throw new BackupRefused("DATABASE_URL is :memory:: there is nothing to back up");
  if (!existsSync(file)) throw new BackupRefused(`no database at ${file}`);
  if (resolve(out) === resolve(file)) throw new BackupRefused(`${out} is the database itself`);
  if (existsSync(out) && !options.force) throw new BackupRefused(`${out} exists; add --force to replace it`);
  // Written beside the target and renamed at the end: `out` is never a half-written backup.
  const partial = `${out}.partial`;
  rmSync(partial, { force: true });
  createPrivateFile(partial);
  const db = new Database(file, { fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.prepare("VACUUM INTO ?").run(partial);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  } finally {
    db.close();
  }
  sync(partial);
  renameSync(partial, out);
  sync(dirname(out));
  return statSync(out).size;
}

/** Throws unless `file` is an intact SQLite database with the service's tables. */
function checkBackup(file: string): void {
  if (!existsSync(file)) throw new BackupRefused(`no backup at ${file}`);
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new BackupRefused(`${file} is not a SQLite database (${(error as Error).message})`);
  }
  try {
    const check = db.pragma("quick_check", { simple: true });
    if (check !== "ok") throw new BackupRefused(`${file} is damaged: ${String(check)}`);
    const layout = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
      .get(LAYOUT_TABLE);
    if (!layout) throw new BackupRefused(`${file} is not a Service Auth database (no ${LAYOUT_TABLE} table)`);
  } catch (error) {
    if (error instanceof BackupRefused) throw error;
    throw new BackupRefused(`${file} is not a readable SQLite database (${(error as Error).message})`);
  } finally {
    db.close();
  }
}

/** Whether another connection (any process) has `file` open. */
function inUse(file: string): boolean {
  const db = new Database(file, { fileMustExist: true });
  try {
    db.pragma("busy_timeout = 0");
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE; COMMIT");
    return false;
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith("SQLITE_BUSY")) return true;
    throw error;
  } finally {
    db.close();
  }
}

/**
 * Replaces the database `file` with the backup `from`. Refuses when `file` exists unless
 * `force`, and always while another connection has it open.
 */
export function restoreSqlite(from: string, file: string, options: { force?: boolean } = {}): void {
  if (file === ":memory:") throw new BackupRefused("DATABASE_URL is :memory:: nothing to restore into");
  if (resolve(from) === resolve(file)) throw new BackupRefused(`${from} is the database itself`);
  checkBackup(from);
  if (existsSync(file)) {
    if (!options.force) throw new BackupRefused(`${file} exists; restoring replaces it: add --force`);
    if (inUse(file)) {
      throw new BackupRefused(
        `${file} is open in another process (a running server?): stop it, then restore`,
      );
    }
  }
  const partial = `${file}.restoring`;
  rmSync(partial, { force: true });
  createPrivateFile(partial);
  const source = new Database(from, { readonly: true, fileMustExist: true });
  try {
    source.prepare("VACUUM INTO ?").run(partial);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  } finally {
    source.close();
  }
  sync(partial);
  // The old file's WAL must not be replayed onto the new file.
  for (const suffix of ["-wal", "-shm", "-journal"]) rmSync(`${file}${suffix}`, { force: true });
  renameSync(partial, file);
  sync(dirname(file));
}
