/**
 * Why the first connection to PostgreSQL failed at start, for the operator: where it tried (host,
 * port, database, user; never the password) and the driver's cause in words, with what to check.
 * A wrong URL is not "try again shortly".
 */
import { StartRefusal } from "../../start-refusal.ts";
import { describeHosts, parseHostList } from "./hosts.ts";

/** Where a connection string points (its first host; `where` names them all). */
export interface PostgresAddress {
  host: string;
  port: number;
  database: string;
  user: string;
  /** `host:port`, or with several hosts (a failover formation) `h1:p1, h2:p2`. */
  where: string;
}

export function postgresAddressOf(connectionString: string): PostgresAddress {
  const list = parseHostList(connectionString);
  // The first host's one-host URL is one node-postgres and WHATWG URL both read.
  const url = new URL(list.urlFor(list.hosts[0]));
  const user = decodeURIComponent(url.username) || process.env.PGUSER || process.env.USER || "postgres";
  const host = url.searchParams.get("host") || decodeURIComponent(url.hostname) || "localhost";
  const port = Number(url.port || 5432);
  return {
    host,
    port,
    database: decodeURIComponent(url.pathname.slice(1)) || user,
    user,
    where: list.hosts.length > 1 ? describeHosts(list.hosts) : `${host}:${port}`,
  };
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "";
}

/** The cause in words, and what to check, by the driver's error code. */
function explain(error: unknown, at: PostgresAddress): { cause: string; fix: string } {
  const message = error instanceof Error ? error.message : String(error);
  const url = "DATABASE_URL";
  switch (codeOf(error)) {
    case "ECONNREFUSED":
      return {
        cause: "connection refused (nothing listens there)",
        fix: `start PostgreSQL, or correct the host and port in ${url}`,
      };
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return { cause: `host "${at.host}" not found`, fix: `correct the host name in ${url}` };
    case "EHOSTUNREACH":
    case "ENETUNREACH":
    case "ETIMEDOUT":
      return {
        cause: `no route to the host (${codeOf(error)})`,
        fix: `check the host in ${url} and that a firewall lets the connection through`,
      };
    case "28P01":
      return { cause: message, fix: `correct the user name and password in ${url}` };
    case "28000":
      return { cause: message, fix: `correct the user in ${url}, or let it connect (pg_hba.conf)` };
    case "3D000":
      return {
        cause: message,
        fix: `create it (createdb -h ${at.host} -p ${at.port} -U ${at.user} ${at.database}) or correct the database name in ${url}`,
      };
    case "08001":
      // NoPrimaryError (postgres/primary-locator.ts): the message says what each host answered.
      return {
        cause: message,
        fix: `wait for the failover manager to promote a standby (pg_autoctl show state), or correct the hosts in ${url}`,
      };
    case "57P03":
      return {
        cause: message,
        fix: "the server is starting or shutting down: start again once it accepts connections",
      };
  }
  if (/timeout/i.test(message)) {
    return {
      cause: "no answer in time (connection timeout)",
      fix: `check the host and port in ${url} and that a firewall lets the connection through; DATABASE_CONNECT_TIMEOUT_MS sets how long to wait`,
    };
  }
  return { cause: message, fix: `check ${url}` };
}

/**
 * The first connection to PostgreSQL failed; the message names where, why and what to check.
 *
 * @example
 * ```ts
 * import { DatabaseConnectError, startService } from "service-auth/server";
 *
 * try {
 *   await startService({ ...app, databaseUrl: "postgres://app:secret@db.internal:5432/app" });
 * } catch (error) {
 *   if (error instanceof DatabaseConnectError) console.error(`PostgreSQL at ${error.address.where} unreachable`);
 *   throw error;
 * }
 * ```
 */
export class DatabaseConnectError extends StartRefusal {
  override name = "DatabaseConnectError";
  readonly address: PostgresAddress;
  constructor(connectionString: string, cause: unknown) {
    const at = postgresAddressOf(connectionString);
    const { cause: why, fix } = explain(cause, at);
    super(
      `cannot connect to PostgreSQL at ${at.where}, database "${at.database}", user "${at.user}": ${why}\n    fix: ${fix}`,
      { cause },
    );
    this.address = at;
  }
}
