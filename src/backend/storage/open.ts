/** Chooses the storage engine from `DATABASE_URL`, with the timeouts from `DATABASE_*_MS`. */
import { resolve } from "node:path";
import { durabilitySetting } from "../settings/durability.ts";
import { SettingError, SettingsCheck, settingProblem } from "../settings/problems.ts";
import { readReplicaSettings } from "../settings/read-replicas.ts";
import type { StorageEngine } from "./engine.ts";
import { PostgresEngine, type PostgresOptions } from "./postgres/engine.ts";
import { type HostList, parseHostList, UnsupportedSessionTarget } from "./postgres/hosts.ts";
import { poolerMode } from "./postgres/pooler.ts";
import type { SqliteCommitLogOptions } from "./sqlite/commit-log.ts";
import { SqliteEngine } from "./sqlite/engine.ts";

/** Default embedded database file, relative to the working directory. */
export const DEFAULT_DATABASE_FILE = "./.data/service.sqlite";

/** Where `DATABASE_URL` points: a SQLite file (absolute path, or ":memory:") or a PostgreSQL URL. */
export type DatabaseTarget =
  | { kind: "sqlite"; filename: string }
  | { kind: "postgres"; connectionString: string };

/**
 * A duration setting from the environment, in ms; undefined when unset (the engine's default).
 * A value that is not a positive integer (or 0, with `allowZero`) throws a {@link SettingError}
 * rather than silently meaning "none".
 */
export function durationSetting(
  name: string,
  env: Record<string, string | undefined> = process.env,
  options: { allowZero?: boolean } = {},
): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const ms = Number(raw);
  const min = options.allowZero ? 0 : 1;
  if (!Number.isSafeInteger(ms) || ms < min) {
    throw new SettingError(
      settingProblem(
        name,
        env[name],
        `not a ${options.allowZero ? "" : "positive "}whole number of milliseconds`,
        `set ${name}=${options.allowZero ? "0 or more" : "a number above 0"}, e.g. ${name}=5000, or unset it for the default`,
      ),
    );
  }
  return ms;
}

/** Schemes `DATABASE_URL` may have; anything else (`postgress://`, `mysql://`) is refused, not taken for a file name. */
const SQLITE_SCHEME = /^(sqlite|file):(\/\/)?/i;
const POSTGRES_SCHEME = /^postgres(ql)?:\/\//i;
const ANY_SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;
const ACCEPTED =
  "postgres://user:password@host:5432/db, postgresql://…, sqlite:PATH, file:PATH or a plain file path";

/**
 * A PostgreSQL URL the engine can use, or a {@link SettingError} saying why not. Several hosts
 * (`postgres://h1:5432,h2:5432/db?target_session_attrs=read-write`, a failover formation's URL)
 * are fine: the engine connects to the one that accepts writes (postgres/primary-locator.ts).
 */
function checkPostgresUrl(url: string): void {
  let list: HostList;
  try {
    list = parseHostList(url);
  } catch (error) {
    if (error instanceof UnsupportedSessionTarget) {
      throw new SettingError(
        settingProblem(
          "DATABASE_URL",
          url,
          `asks for a standby (target_session_attrs=${error.value}); the service writes through DATABASE_URL`,
          "use target_session_attrs=read-write (or leave it out); standbys that serve reads go in DATABASE_READ_URLS",
        ),
      );
    }
    throw invalidUrl(url);
  }
  if (list.hosts.length > 1 && list.target === "any") {
    throw new SettingError(
      settingProblem(
        "DATABASE_URL",
        url,
        "lists several hosts with target_session_attrs=any: writes could land on a standby",
        "use target_session_attrs=read-write, so the service connects to whichever host is the primary",
      ),
    );
  }
  for (const host of list.hosts) {
    try {
      new URL(list.urlFor(host));
    } catch {
      throw invalidUrl(url);
    }
  }
}

function invalidUrl(url: string): SettingError {
  return new SettingError(
    settingProblem(
      "DATABASE_URL",
      url,
      "is not a valid URL",
      `use ${ACCEPTED}; percent-encode special characters in the password`,
    ),
  );
}

/**
 * `undefined` or a path → SQLite file; `sqlite:PATH` / `file:PATH` → SQLite file;
 * `postgres://…` / `postgresql://…` → PostgreSQL (connections open lazily, at `migrate`). Any
 * other `scheme://`, and a PostgreSQL URL the engine cannot use (unparsable, or asking for a
 * standby), throw a {@link SettingError}. Several hosts are accepted (see `checkPostgresUrl`).
 *
 * Settings: `DATABASE_CONNECT_TIMEOUT_MS`, `DATABASE_STATEMENT_TIMEOUT_MS`,
 * `DATABASE_QUERY_TIMEOUT_MS` (PostgreSQL), `DATABASE_BUSY_TIMEOUT_MS` (SQLite), `SQLITE_SYNCHRONOUS`,
 * `INDEX_BUILD_BATCH` (both).
 */
export function databaseTarget(databaseUrl: string | undefined): DatabaseTarget {
  const url = databaseUrl?.trim() || DEFAULT_DATABASE_FILE;
  if (POSTGRES_SCHEME.test(url)) {
    checkPostgresUrl(url);
    return { kind: "postgres", connectionString: url };
  }
  const scheme = ANY_SCHEME.exec(url)?.[1];
  if (scheme && !SQLITE_SCHEME.test(url)) {
    throw new SettingError(
      settingProblem("DATABASE_URL", url, `unknown scheme "${scheme}:"`, `use ${ACCEPTED}`),
    );
  }
  const file = url.replace(SQLITE_SCHEME, "");
  return { kind: "sqlite", filename: file === ":memory:" ? file : resolve(file) };
}

/**
 * The engine for `databaseUrl` (see {@link databaseTarget}); PostgreSQL connects lazily, at `migrate`.
 * `cluster.commitLog`: this process is one of several workers sharing the database (cluster mode);
 * SQLite then keeps a commit log (PostgreSQL always does).
 */
export function openEngine(
  databaseUrl: string | undefined,
  cluster: { commitLog?: SqliteCommitLogOptions } = {},
): StorageEngine {
  const target = databaseTarget(databaseUrl);
  const indexBuild = { batchSize: indexBuildBatch(process.env) };
  if (target.kind === "postgres") {
    return new PostgresEngine({
      ...postgresSettings(target.connectionString, process.env),
      indexBuild,
      connectTimeoutMs: durationSetting("DATABASE_CONNECT_TIMEOUT_MS"),
      statementTimeoutMs: durationSetting("DATABASE_STATEMENT_TIMEOUT_MS"),
      queryTimeoutMs: durationSetting("DATABASE_QUERY_TIMEOUT_MS"),
    });
  }
  // FULL also survives power loss, at the price of an fsync per commit (docs/decisions.md 2).
  const synchronous = process.env.SQLITE_SYNCHRONOUS?.toUpperCase() === "FULL" ? "FULL" : "NORMAL";
  return new SqliteEngine({
    filename: target.filename,
    synchronous,
    busyTimeoutMs: durationSetting("DATABASE_BUSY_TIMEOUT_MS"),
    commitLog: cluster.commitLog,
    indexBuild,
  });
}

/**
 * `INDEX_BUILD_BATCH`: documents per transaction of an online index build (default 1000); a
 * smaller batch shortens the longest write stall, a larger one the build.
 */
export function indexBuildBatch(env: Record<string, string | undefined>): number | undefined {
  const raw = env.INDEX_BUILD_BATCH?.trim();
  if (!raw) return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1 || n > 100_000) {
    throw new Error(`INDEX_BUILD_BATCH must be a whole number of documents from 1 to 100000, got "${raw}"`);
  }
  return n;
}

/**
 * Cross-instance settings of the PostgreSQL engine from the environment: `DATABASE_NOTIFY=off`
 * (poll the commit log instead of LISTEN/NOTIFY), `DATABASE_POOLER=transaction` (no named
 * prepared statements), `DATABASE_LISTEN_URL` (a direct connection for LISTEN when
 * `DATABASE_URL` goes through a pooler), `DATABASE_POLL_MS` (the commit log poll period), the
 * read replicas (`DATABASE_READ_URLS`, `DATABASE_READ_WAIT_MS`, `settings/read-replicas.ts`) and
 * when writes are acknowledged (`DATABASE_DURABILITY`, `settings/durability.ts`).
 */
export function postgresSettings(url: string, env: Record<string, string | undefined>): PostgresOptions {
  const check = new SettingsCheck();
  const pooler = check.read(() => poolerMode(env.DATABASE_POOLER)) ?? "none";
  const listenUrl = env.DATABASE_LISTEN_URL?.trim() || undefined;
  const notifySetting = env.DATABASE_NOTIFY?.trim().toLowerCase();
  if (notifySetting && !["on", "off", "true", "false", "1", "0"].includes(notifySetting)) {
    check.add(
      settingProblem(
        "DATABASE_NOTIFY",
        env.DATABASE_NOTIFY,
        'neither "on" nor "off"',
        "set DATABASE_NOTIFY=on or off",
      ),
    );
  }
  // LISTEN needs a session of its own: through a transaction pooler only with a direct URL.
  const notify = !["off", "false", "0"].includes(notifySetting ?? "") && (pooler === "none" || !!listenUrl);
  const pollMs = env.DATABASE_POLL_MS?.trim();
  const pollIntervalMs = pollMs ? Number(pollMs) : undefined;
  if (pollIntervalMs !== undefined && !(Number.isInteger(pollIntervalMs) && pollIntervalMs >= 10)) {
    check.add(
      settingProblem(
        "DATABASE_POLL_MS",
        env.DATABASE_POLL_MS,
        "not a whole number of milliseconds ≥ 10",
        "set DATABASE_POLL_MS=100 (or more), or unset it for the default",
      ),
    );
  }
  const replicas = check.read(() => readReplicaSettings(env));
  const durability = check.read(() => durabilitySetting(env));
  check.refuseIfAny();
  return {
    connectionString: url,
    pooler,
    notify,
    listenConnectionString: listenUrl,
    pollIntervalMs,
    // Only with replicas: without them nothing changes, not even the options' shape.
    ...(replicas?.readConnectionStrings.length ? replicas : {}),
    ...(durability === "standby" ? { durability } : {}),
  };
}
