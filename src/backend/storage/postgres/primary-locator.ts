/**
 * Which server the engine's connections go to, and noticing when that server changes.
 *
 * With several hosts in `DATABASE_URL` (a failover formation) the locator finds the writable one:
 * it asks every host at once (`pg_is_in_recovery()`, `transaction_read_only`) and keeps the first
 * writable one to answer; when a connection to it fails or turns out read-only, the next
 * connection asks again. Every connection checks, once, right after it connects, that its server
 * is writable (when the URL asks for that), so a connection never lands on a standby: a demoted
 * primary restarts as one, and reads from it would miss the new primary's commits.
 *
 * The same check reads the server's start time. A connection to a server other than the last one
 * seen (another host after a failover, or the same one restarted) means commit log numbers seen
 * before may be gone or drawn again: `onSwitch` listeners (the commit log follower) start over.
 *
 * A connection checked once stays trusted only while its server does. During a switchover the old
 * primary keeps running for a while (pg_auto_failover's `draining`/`demote_timeout`; read-only, or
 * not yet stopped) and answers reads on the connections opened to it before, while writes go to the
 * new one: such reads would miss acknowledged writes (and could accept a revoked session). So
 * every connection carries the epoch it was admitted in, and the epoch moves on when connections
 * reach another server or one of them finds its server no longer the primary ({@link
 * PrimaryLocator.retire}): a connection of an earlier epoch is stale and serves nothing more (the
 * pools drop it, postgres/pools.ts). Reads notice a read-only server in their opening round trip
 * ({@link SERVER_ROLE_SQL}), writes by SQLSTATE 25006; both cost nothing when nothing moved.
 *
 * An old primary can also stay writable-looking: its failover manager's agent dead or frozen (or
 * slow) while its server runs on, it is replaced without being fenced, and the sessions still open
 * to it read a history that misses what the new primary acknowledged (a revoked session accepted).
 * Such a server has lost its synchronous standby (the new primary stopped streaming from it when it
 * was promoted) while it still asks for one: it is *degraded* ({@link DEGRADED_SQL}). So is a
 * primary whose standby merely died, which must go on serving; the two differ in whether another
 * host of the list is a healthy writable primary now. A read on a degraded server therefore waits
 * for a probe of the other hosts that started after the read did ({@link PrimaryLocator.replaced});
 * if one is, the server is retired like a read-only one. A new connection prefers a healthy primary
 * to a degraded one. (A server that still believes its standby attached, e.g. across a network
 * partition until `wal_sender_timeout`, is not caught here: fencing it is the manager's job.)
 */
import pg from "pg";
import { logger } from "../../logger.ts";
import { describeHosts, type HostList, type PostgresHost, parseHostList } from "./hosts.ts";

/**
 * Whether the server waits for a synchronous standby that is not there: `synchronous_standby_names`
 * set, and no WAL sender in the sync (or quorum) set. A sender whose state is hidden (a role without
 * `pg_read_all_stats` sees only its pid) counts as attached: unknown is not degraded.
 */
const DEGRADED_SQL =
  "(current_setting('synchronous_standby_names') <> '' AND NOT EXISTS (SELECT 1 FROM pg_stat_get_wal_senders() w WHERE w.sync_state IS NULL OR w.sync_state IN ('sync', 'quorum')))";

/** Asked on every new connection: is this the primary, and which server run is it. */
const CHECK_SQL = `SELECT pg_is_in_recovery() AS recovery, current_setting('transaction_read_only') AS read_only, ${DEGRADED_SQL} AS degraded, pg_postmaster_start_time()::text AS started`;

interface ServerCheck {
  writable: boolean;
  /** Writable, but without the synchronous standby it asks for ({@link DEGRADED_SQL}). */
  degraded: boolean;
  started: string;
}

/**
 * Sent with every read's opening statements (same round trip): whether the server still is a
 * writable primary. `default_transaction_read_only` follows `ALTER SYSTEM` + reload in sessions
 * already open, which is how a failover manager fences an old primary (`transaction_read_only`
 * cannot tell: inside a read-only snapshot it is always on).
 */
export const SERVER_ROLE_SQL = `SELECT pg_is_in_recovery() AS recovery, current_setting('default_transaction_read_only') AS read_only, ${DEGRADED_SQL} AS degraded`;

/** The server of a connection is no longer the primary (read-only or in recovery): nothing ran there. */
export class ServerNotPrimaryError extends Error {
  override name = "ServerNotPrimaryError";
  /** SQLSTATE 25006 (read_only_sql_transaction), as a write to that server would get. */
  readonly code = "25006";
}

/**
 * Throws {@link ServerNotPrimaryError} unless `result` (of {@link SERVER_ROLE_SQL}) says writable
 * primary; "degraded" when it lacks the synchronous standby it asks for (see the module comment).
 */
export function checkServerRole(result: unknown): "primary" | "degraded" {
  const row = (
    result as { rows?: { recovery?: unknown; read_only?: unknown; degraded?: unknown }[] } | undefined
  )?.rows?.[0];
  if (row && row.recovery === false && row.read_only === "off")
    return row.degraded === true ? "degraded" : "primary";
  throw new ServerNotPrimaryError("the PostgreSQL server turned read-only (no longer the primary)");
}

/** Whether `error` says the connection's server refuses writes (SQLSTATE 25006): it is no longer the primary. */
export function isServerReadOnly(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "25006";
}

/** SQLSTATE 57P03 (cannot_connect_now): the server is shutting down, starting up or in recovery. */
function refusesNewSessions(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "57P03";
}

/** No host of the list accepts writes (or answers). Class 08: callers see DATABASE_UNAVAILABLE. */
export class NoPrimaryError extends Error {
  override name = "NoPrimaryError";
  /** SQLSTATE 08001 (sqlclient_unable_to_establish_sqlconnection): a connection fault. */
  readonly code = "08001";
}

async function check(client: pg.Client): Promise<ServerCheck> {
  const { rows } = await client.query<{
    recovery: boolean;
    read_only: string;
    degraded: boolean;
    started: string;
  }>(CHECK_SQL);
  const row = rows[0];
  return { writable: !row.recovery && row.read_only === "off", degraded: row.degraded, started: row.started };
}

function reason(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "ECONNREFUSED") return "connection refused";
  return error instanceof Error ? error.message : String(error);
}

export interface PrimaryLocatorOptions {
  /** Connecting to one host (and its check) fails after this long, ms. */
  connectTimeoutMs: number;
  /** Settings every connection shares (user, password, ssl …) besides its host and port. */
  base?: pg.ClientConfig;
}

export class PrimaryLocator {
  readonly list: HostList;
  /** A `pg.Client` whose `connect` goes to the located server and checks it (see the module comment). */
  readonly Client: typeof pg.Client;
  private current?: PostgresHost;
  private resolving?: Promise<PostgresHost>;
  /** The server run last connected to: `host:port@start time`. */
  private server?: string;
  private readonly switchListeners = new Set<() => void>();
  private readonly staleListeners = new Set<() => void>();
  /** Moves on when connections admitted before may no longer be trusted (see the module comment). */
  private epoch = 0;
  /** The epoch each connection was admitted in, and its server. */
  private readonly admitted = new WeakMap<object, { epoch: number; server: string; host: PostgresHost }>();
  /** Per degraded host, the probe of the other hosts running and the one queued behind it ({@link replaced}). */
  private readonly probes = new Map<PostgresHost, { running?: Promise<boolean>; next?: Promise<boolean> }>();

  constructor(
    connectionString: string,
    private readonly options: PrimaryLocatorOptions,
    Base: typeof pg.Client = pg.Client,
  ) {
    this.list = parseHostList(connectionString);
    this.Client = locatedClient(this, Base);
  }

  /** Whether there is a choice to make (several hosts). */
  get multiHost(): boolean {
    return this.list.hosts.length > 1;
  }

  /** A one-host URL node-postgres can parse (the first host's; `connect` replaces the host). */
  get connectionString(): string {
    return this.list.urlFor(this.current ?? this.list.hosts[0]);
  }

  /** The host the next connection goes to: the known primary, or the first writable one found now. */
  target(): Promise<PostgresHost> {
    if (this.current) return Promise.resolve(this.current);
    if (!this.multiHost) return Promise.resolve(this.list.hosts[0]);
    this.resolving ??= this.resolve().finally(() => {
      this.resolving = undefined;
    });
    return this.resolving;
  }

  /** A connection to `host` failed or found it read-only: the next one looks again. */
  failed(host: PostgresHost): void {
    if (this.current === host) this.current = undefined;
  }

  /** Calls `listener` when connections reach a different server (or a restarted one); returns the unsubscribe. */
  onSwitch(listener: () => void): () => void {
    this.switchListeners.add(listener);
    return () => this.switchListeners.delete(listener);
  }

  /** Calls `listener` when connections admitted before became stale ({@link isStale}); returns the unsubscribe. */
  onStale(listener: () => void): () => void {
    this.staleListeners.add(listener);
    return () => this.staleListeners.delete(listener);
  }

  /** Whether `client` was admitted before its server (or the primary) changed: it must serve nothing more. */
  isStale(client: object): boolean {
    const admitted = this.admitted.get(client);
    return admitted !== undefined && admitted.epoch !== this.epoch;
  }

  /**
   * `client` found its server no longer the primary (read-only, in recovery): every connection
   * admitted so far becomes stale, and the next one looks for the primary again.
   */
  retire(client: object): void {
    const admitted = this.admitted.get(client);
    if (!admitted || admitted.epoch !== this.epoch) return;
    logger.warn("PostgreSQL server no longer the primary: dropping its connections", {
      server: `${admitted.host.host}:${admitted.host.port}`,
    });
    this.failed(admitted.host);
    this.invalidate();
  }

  /**
   * `host` refuses new sessions (shutting down, starting up, in recovery): when the trusted server
   * runs there, the sessions still open to it belong to a server going away (a smart shutdown lets
   * them run on, serving reads that miss the new primary's writes): they become stale.
   */
  goingAway(host: PostgresHost): void {
    if (!this.server?.startsWith(`${host.host}:${host.port}@`)) return;
    logger.warn("PostgreSQL server refuses new sessions: dropping its connections", {
      server: `${host.host}:${host.port}`,
    });
    this.invalidate();
  }

  /** A connection (`client`) reached `host`, a run of the server that started at `started`. */
  reached(host: PostgresHost, started: string, client?: object): void {
    const server = `${host.host}:${host.port}@${started}`;
    const before = this.server;
    if (before !== server) {
      this.server = server;
      if (before !== undefined) this.invalidate();
    }
    if (client) this.admitted.set(client, { epoch: this.epoch, server, host });
    if (before === server || before === undefined) return;
    logger.warn("PostgreSQL server changed (failover or restart): catching up from the commit log", {
      server: `${host.host}:${host.port}`,
    });
    for (const listener of this.switchListeners) listener();
  }

  private invalidate(): void {
    this.epoch++;
    for (const listener of this.staleListeners) listener();
  }

  /**
   * The first healthy writable host to answer; once every host answered without one, the first
   * degraded writable one (its standby may just have died: it is still the primary).
   */
  private async resolve(): Promise<PostgresHost> {
    const { hosts } = this.list;
    const reasons = new Array<string>(hosts.length);
    let degraded: PostgresHost | undefined;
    return new Promise<PostgresHost>((found, none) => {
      let left = hosts.length;
      hosts.forEach((host, i) => {
        this.probe(host)
          .then(
            ({ writable, degraded: lacksStandby }) => {
              if (writable && lacksStandby) degraded ??= host;
              else if (writable && !this.current) {
                this.current = host;
                found(host);
              }
              reasons[i] = !writable
                ? "read-only (a standby)"
                : lacksStandby
                  ? "writable, without its synchronous standby"
                  : "writable";
            },
            (error) => {
              reasons[i] = reason(error);
              if (refusesNewSessions(error)) this.goingAway(host);
            },
          )
          .finally(() => {
            if (--left > 0 || this.current) return;
            if (degraded) {
              this.current = degraded;
              found(degraded);
              return;
            }
            const each = hosts.map((h, j) => `${describeHosts([h])} (${reasons[j]})`).join(", ");
            none(new NoPrimaryError(`no writable PostgreSQL server among ${each}`));
          });
      });
    });
  }

  /**
   * Whether a host other than `client`'s is a healthy writable primary now: `client`'s server,
   * degraded, was then replaced (see the module comment). Answered by a probe of the other hosts
   * that starts after this call: callers arriving while one runs share the next.
   */
  replaced(client: object): Promise<boolean> {
    const host = this.admitted.get(client)?.host;
    if (!host || !this.multiHost) return Promise.resolve(false);
    let rounds = this.probes.get(host);
    if (!rounds) this.probes.set(host, (rounds = {}));
    const state = rounds;
    if (!state.running) {
      state.running = this.probeOthers(host).finally(() => {
        state.running = undefined;
      });
      return state.running;
    }
    state.next ??= state.running.then(() => {
      state.next = undefined;
      return this.replaced(client);
    });
    return state.next;
  }

  private async probeOthers(host: PostgresHost): Promise<boolean> {
    const others = this.list.hosts.filter((h) => h !== host);
    const answers = await Promise.all(
      others.map((h) =>
        this.probe(h).then(
          (check) => check.writable && !check.degraded,
          () => false,
        ),
      ),
    );
    const replaced = answers.some(Boolean);
    if (replaced) {
      logger.warn("PostgreSQL server lost its synchronous standby and another host is the primary now", {
        server: `${host.host}:${host.port}`,
      });
    }
    return replaced;
  }

  /** What `host` answers to the connection check, within the connect timeout. */
  private async probe(host: PostgresHost): Promise<ServerCheck> {
    const client = new pg.Client({
      ...this.options.base,
      connectionString: this.list.urlFor(host),
      connectionTimeoutMillis: this.options.connectTimeoutMs,
      query_timeout: this.options.connectTimeoutMs,
      application_name: "service-auth-locate",
    });
    client.on("error", () => {});
    try {
      await client.connect();
      return await check(client);
    } finally {
      client.end().catch(() => {});
    }
  }
}

/**
 * `Base` (pg.Client or a subclass) connecting to `locator`'s target and checking the server once
 * connected: refused (and the locator told) when the URL asks for the primary and it is not.
 */
function locatedClient(locator: PrimaryLocator, Base: typeof pg.Client): typeof pg.Client {
  const mustWrite = locator.list.target === "read-write";
  return class LocatedClient extends Base {
    // pg's connect() has a promise and a callback form; pg-pool uses the callback.
    override connect(callback?: any): any {
      const connected = this.locateAndConnect();
      if (!callback) return connected;
      connected.then(
        () => callback(null, this),
        (error) => callback(error),
      );
      return undefined;
    }

    private async locateAndConnect(): Promise<void> {
      const host = await locator.target();
      if (locator.multiHost) {
        // One host: node-postgres's own reading of the URL (and of PGHOST/PGPORT) stands.
        const self = this as unknown as {
          host: string;
          port: number;
          connectionParameters: { host: string; port: number };
        };
        self.host = self.connectionParameters.host = host.host;
        self.port = self.connectionParameters.port = host.port;
      }
      // The pool's connect timeout may have destroyed the socket while the primary was looked for.
      if (
        (this as unknown as { connection?: { stream?: { destroyed?: boolean } } }).connection?.stream
          ?.destroyed
      ) {
        throw new Error("Connection terminated due to connection timeout");
      }
      // Lost later (server gone, shut down for a switchover): the next connection looks again.
      this.on("error", () => locator.failed(host));
      try {
        await super.connect();
      } catch (error) {
        locator.failed(host);
        if (refusesNewSessions(error)) locator.goingAway(host);
        throw error;
      }
      let server: ServerCheck;
      try {
        server = await check(this);
      } catch (error) {
        locator.failed(host);
        this.end().catch(() => {});
        throw error;
      }
      if (mustWrite && !server.writable) {
        locator.failed(host);
        this.end().catch(() => {});
        throw new NoPrimaryError(
          `PostgreSQL at ${describeHosts([host])} is read-only (a standby), not the primary`,
        );
      }
      locator.reached(host, server.started, this);
    }
  };
}
