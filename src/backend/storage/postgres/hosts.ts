/**
 * The hosts of a PostgreSQL URL, read as libpq reads them: `postgres://user:pw@h1:5432,h2:5433/db`
 * lists several servers (a failover manager's formation, e.g. `pg_autoctl show uri`), and
 * `target_session_attrs=read-write` (or `primary`) asks for the one that accepts writes.
 * node-postgres takes a single host, so the engine chooses one itself (postgres/primary-locator.ts)
 * and connects node-postgres to it with a one-host URL made here.
 */

/** One server of the list. */
export interface PostgresHost {
  host: string;
  port: number;
  /** As written in the URL (a URL made for this host keeps it, so a missing port stays missing). */
  spec?: string;
}

/** What a connection to a host must be: anything that answers, or the writable primary. */
export type SessionTarget = "any" | "read-write";

export interface HostList {
  hosts: PostgresHost[];
  /**
   * `read-write` when the URL asks for it (`target_session_attrs=read-write` or `primary`) or lists
   * several hosts: the engine writes, so among several it must find the primary.
   */
  target: SessionTarget;
  /** The URL with `at` as its only host and without `target_session_attrs` (for node-postgres). */
  urlFor(at: PostgresHost): string;
}

/** A `target_session_attrs` the engine cannot honour (it asks for a standby); see {@link parseHostList}. */
export class UnsupportedSessionTarget extends Error {
  constructor(readonly value: string) {
    super(`target_session_attrs=${value} asks for a standby; DATABASE_URL must reach the primary`);
  }
}

const SCHEME = /^(postgres(?:ql)?:\/\/)/i;
const DEFAULT_PORT = 5432;

/** `h`, `h:p`, `[v6]`, `[v6]:p` (percent-decoded host). */
function parseHost(spec: string): PostgresHost {
  const bracket = /^\[([^\]]*)\](?::(\d*))?$/.exec(spec);
  if (bracket) return { host: bracket[1], port: Number(bracket[2] || DEFAULT_PORT), spec };
  const colon = spec.lastIndexOf(":");
  const host = colon < 0 ? spec : spec.slice(0, colon);
  const port = colon < 0 ? "" : spec.slice(colon + 1);
  if (port !== "" && !/^\d+$/.test(port)) throw new TypeError(`invalid port in host "${spec}"`);
  return { host: decodeURIComponent(host), port: Number(port || DEFAULT_PORT), spec };
}

function formatHost({ host, port }: PostgresHost): string {
  return `${host.includes(":") ? `[${host}]` : encodeURIComponent(host)}:${port}`;
}

/** `h1:p1, h2:p2` for messages. */
export function describeHosts(hosts: readonly PostgresHost[]): string {
  return hosts.map(formatHost).join(", ");
}

/**
 * The hosts of `url` (a `postgres://` or `postgresql://` URL); a URL without a host (a Unix
 * socket given as `?host=/run/postgresql`) yields its one address as node-postgres reads it.
 * Throws a TypeError for an unparsable host list and {@link UnsupportedSessionTarget} for a
 * `target_session_attrs` other than `any`, `read-write` or `primary`.
 */
export function parseHostList(url: string): HostList {
  const scheme = SCHEME.exec(url)?.[1];
  if (!scheme) throw new TypeError("not a postgres:// URL");
  const rest = url.slice(scheme.length);
  // The authority runs up to the first "/", "?" or "#"; its hosts follow the last "@".
  const end = rest.search(/[/?#]/);
  const authority = end < 0 ? rest : rest.slice(0, end);
  const tail = end < 0 ? "" : rest.slice(end);
  const at = authority.lastIndexOf("@");
  const userinfo = at < 0 ? "" : authority.slice(0, at + 1);
  const hostPart = authority.slice(at + 1);

  const [pathAndQuery, fragment] = splitOnce(tail, "#");
  const [path, query] = splitOnce(pathAndQuery, "?");
  // The other parameters stay exactly as written.
  const isAttrs = (pair: string) => decodeURIComponent(pair.split("=", 1)[0]) === "target_session_attrs";
  const pairs = query === undefined ? [] : query.split("&");
  const attrsPair = pairs.filter(isAttrs).pop();
  const attrs =
    attrsPair === undefined
      ? undefined
      : decodeURIComponent(attrsPair.slice(attrsPair.indexOf("=") + 1)).toLowerCase();
  if (attrs !== undefined && !["any", "read-write", "primary"].includes(attrs)) {
    throw new UnsupportedSessionTarget(attrs);
  }
  const specs = hostPart === "" ? [] : hostPart.split(",");
  if (specs.some((s) => s === "")) throw new TypeError("empty host in the host list");
  const hosts = specs.map(parseHost);
  const kept = pairs.filter((pair) => !isAttrs(pair)).join("&");
  const search = query === undefined ? "" : attrsPair === undefined ? `?${query}` : kept ? `?${kept}` : "";
  const suffix = `${path}${search}${fragment === undefined ? "" : `#${fragment}`}`;
  const target: SessionTarget =
    attrs === "read-write" || attrs === "primary" || (hosts.length > 1 && attrs !== "any")
      ? "read-write"
      : "any";
  return {
    hosts: hosts.length ? hosts : [{ host: "", port: DEFAULT_PORT }],
    target,
    urlFor: (host) =>
      `${scheme}${userinfo}${host.spec ?? (host.host === "" ? "" : formatHost(host))}${suffix}`,
  };
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const i = text.indexOf(separator);
  return i < 0 ? [text, undefined] : [text.slice(0, i), text.slice(i + 1)];
}
