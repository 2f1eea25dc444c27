/**
 * The backend: wires the platform's parts together (the consistency core in commits/, the
 * authenticator, the env store, the transaction scope) and runs functions: resolves `module:name`
 * paths, validates arguments, runs queries in read snapshots and mutations in write transactions.
 */

import { type AuthConfig, type Authenticated, Authenticator } from "./auth/authenticator.ts";
import type { Caller, CallTransaction } from "./caller.ts";
import { type CommitListener, Commits, type Stamp } from "./commits/commits.ts";
import { Phases } from "./commits/phases.ts";
import { Catalog } from "./db/catalog.ts";
import {
  type ConnectionsReader,
  type ConnectionsWriter,
  connectionsReader,
  connectionsWriter,
} from "./db/connections.ts";
import { DatabaseReaderImpl, DatabaseWriterImpl } from "./db/database.ts";
import { commitTables, type DocumentWrite, emptyReadSet, type ReadSet } from "./db/read-write-sets.ts";
import { EnvStore } from "./env/store.ts";
import type {
  ActionCtx,
  HttpAction,
  MutationCtx,
  QueryCtx,
  RequestMeta,
  UserIdentity,
} from "./functions/define.ts";
import { type FunctionReference, functionPath } from "./functions/references.ts";
import type { FunctionKind, RegisteredFunction } from "./functions/registered.ts";
import { FunctionRegistry, parseArgs } from "./functions/registry.ts";
import { staticAuth } from "./functions/static-auth.ts";
import { logger } from "./logger.ts";
import { type ScheduledJobsReader, scheduledJobsReader } from "./scheduler/jobs-reader.ts";
import { type Scheduler, schedulerOn } from "./scheduler/schedule.ts";
import type { SchemaDefinition } from "./schema.ts";
import type { ReadTransaction, StorageEngine, WriteTransaction } from "./storage/engine.ts";
import { inChildSpan } from "./tracing/tracing.ts";
import { TransactionScope } from "./transaction-scope.ts";

// The runtime's API speaks these (options, `authenticate`); transports import them from here.
export type { AuthConfig, Authenticated, IdentityResolver } from "./auth/authenticator.ts";
export type { Caller, CallTransaction } from "./caller.ts";

export interface BackendOptions {
  schema: SchemaDefinition;
  /** Function modules: `{ messages: { list, send }, "admin/users": {...} }`. */
  modules: Record<string, Record<string, unknown>>;
  engine: StorageEngine;
  auth?: AuthConfig | ((env: EnvStore) => AuthConfig);
}

/**
 * Who hears an env store change, in order: `reconfigure` rebuilds what follows the env (the JWT
 * verifier, e.g. after a new `JWKS`), then `recheck` re-examines what was decided with the old
 * configuration (the sync server re-checks every live identity with the rebuilt verifier).
 */
export const ENV_CONSUMERS = [
  { phase: "reconfigure", consumers: ["jwt-verifier"] },
  { phase: "recheck", consumers: ["live-identities"] },
] as const;
export type EnvConsumer = (typeof ENV_CONSUMERS)[number]["consumers"][number];

/**
 * The running backend behind `service-auth/server`'s `Backend` interface: its storage engine,
 * catalog, consistency core and function registry.
 */
export class BackendRuntime {
  readonly catalog: Catalog;
  readonly engine: StorageEngine;
  readonly env: EnvStore;
  /** The consistency core: commit numbering and phases, history, freshness stamps. */
  readonly commits: Commits;
  private readonly functions: FunctionRegistry;
  private readonly authenticator: Authenticator;
  private readonly transactions: TransactionScope;
  private readonly envChanges = new Phases<typeof ENV_CONSUMERS, void>(ENV_CONSUMERS);
  private readonly authSource?: BackendOptions["auth"];

  constructor(options: BackendOptions) {
    this.catalog = new Catalog(options.schema);
    this.engine = options.engine;
    this.env = new EnvStore(this);
    this.authSource = options.auth;
    this.commits = new Commits(this.catalog, this.engine);
    // The identity cache attaches itself as the commits' `identity-cache` consumer.
    this.authenticator = new Authenticator({
      catalog: this.catalog,
      engine: this.engine,
      env: this.env,
      commits: this.commits,
      envSettled: () => this.env.settled(),
    });
    this.commits.on("env-store", (commit) => {
      if (commit.unknown || commitTables(commit).includes("_env")) this.reloadEnv();
    });
    this.envChanges.on("jwt-verifier", () => this.configureAuth());
    this.transactions = new TransactionScope(this.engine, this.commits);
    this.functions = new FunctionRegistry(options.modules);
  }

  /** Migrates storage, loads the env store and follows the commits of other processes. */
  async start(): Promise<void> {
    await this.engine.migrate(this.catalog.layout(), this.catalog.keysOf);
    await this.env.load();
    this.env.onChange(() => this.envChanges.deliver());
    this.commits.followOtherInstances();
    this.configureAuth();
  }

  /** Calls `listener` after every env store change, at `consumer`'s place (see {@link ENV_CONSUMERS}). */
  onEnvChange(consumer: EnvConsumer, listener: () => void): () => void {
    return this.envChanges.on(consumer, listener);
  }

  private reloadEnv(): void {
    void this.env.load().catch((e) => logger.error("env reload failed", { error: String(e) }));
  }

  /** (Re)builds the JWT verifier from the auth config; called again when env changes. */
  configureAuth(): void {
    if (!this.authSource) return;
    this.authenticator.configure(
      typeof this.authSource === "function" ? this.authSource(this.env) : this.authSource,
    );
  }

  /** Registered function at `path`, or a 404 error. */
  lookup(path: string, kind?: FunctionKind, allowInternal = false): RegisteredFunction {
    return this.functions.lookup(path, kind, allowInternal);
  }

  /**
   * `path` when a function is registered there, else "unknown": a metrics or trace label bounded
   * by the app's functions whatever callers send.
   */
  functionLabel(path: string): string {
    return this.functions.has(path) ? path : "unknown";
  }

  functionPaths(): string[] {
    return this.functions.paths();
  }

  /**
   * Calls `listener` after every commit, as the last consumer of its `notify` phase (after the
   * invalidations and the platform's own consumers, commits/consumers.ts); returns the unsubscribe.
   */
  onCommit(listener: CommitListener): () => void {
    return this.commits.on("listeners", listener);
  }

  /** The sequence number of the last published commit. */
  get lastSequence(): number {
    return this.commits.lastSequence;
  }

  // ------------------------------------------------------------------------------ auth

  /** Step 1: verifies the token's signature, expiry, issuer and audience. */
  verifyToken(token: string): Promise<Record<string, unknown>> {
    return this.authenticator.verifyToken(token);
  }

  /**
   * Drops every cached steps-1+2 result, so the next request with any token is verified and
   * looked up again (after editing session or user rows behind the backend's back, or to
   * measure the uncached cost).
   */
  forgetIdentities(): void {
    this.authenticator.forget();
  }

  /** Steps 1 and 2 for a token; used by the WebSocket at connect and re-authentication. */
  authenticate(token: string, meta: RequestMeta = {}): Promise<Authenticated> {
    return this.authenticator.authenticate(token, meta);
  }

  /**
   * Identity for one call: given by the caller, else steps 1+2 for its token in `tx` (the call's
   * snapshot; `stamp` was taken before it began). Not async: a cached identity is returned as is,
   * without a promise per call.
   */
  private identityFor(
    caller: Caller,
    tx: ReadTransaction,
    stamp: Stamp,
  ): UserIdentity | null | Promise<UserIdentity | null> {
    if (caller.identity !== undefined) return caller.identity;
    if (caller.lazyIdentity) return caller.lazyIdentity({ tx, stamp });
    if (!caller.token) return null;
    return this.authenticator.identity(caller.token, caller.meta ?? {}, tx, stamp, caller.trace);
  }

  // ------------------------------------------------------------------------------ execution

  /** Runs a query in one read snapshot; returns its value and exact read set. */
  async runQuery(
    ref: FunctionReference | string,
    args: unknown,
    caller: Caller = {},
    /** Collects the reads here (also when the query throws: live subscriptions re-run failed queries). */
    into?: ReadSet,
  ): Promise<{ value: unknown; readSet: ReadSet }> {
    const fn = this.lookup(functionPath(ref), "query", caller.allowInternal);
    const parsed = parseArgs(fn, args);
    const stamp = this.commits.stamp();
    const entry = this.transactions.current();
    // Inside a transaction scope the query reads the scope's transaction, its writes included.
    // The callbacks stay inline and unnamed: tsx keeps the names of named closures, which costs
    // a defineProperty per closure per call. `return await`: an async function returning a promise
    // settles two microtask turns later than one awaiting it.
    if (entry)
      return await this.transactions.inTurn(entry, () =>
        this.queryIn(entry.scope.tx, fn, parsed, caller, stamp, into),
      );
    if (caller.trace) {
      return await inChildSpan(caller.trace, "db.transaction read", () =>
        this.engine.read((tx) => this.queryIn(tx, fn, parsed, caller, stamp, into)),
      );
    }
    return await this.engine.read((tx) => this.queryIn(tx, fn, parsed, caller, stamp, into));
  }

  /** Runs a query's handler in `tx` (see {@link runQuery}). */
  private async queryIn(
    tx: ReadTransaction,
    fn: RegisteredFunction,
    args: unknown,
    caller: Caller,
    stamp: Stamp,
    into: ReadSet | undefined,
  ): Promise<{ value: unknown; readSet: ReadSet }> {
    // Identity reads are not part of the query's read set: the connection watches them itself.
    // An anonymous caller skips the call (and its await): nothing to resolve. A cached identity
    // comes back synchronously and is not awaited either (an await makes two promises here).
    const found =
      caller.token || caller.identity !== undefined || caller.lazyIdentity
        ? this.identityFor(caller, tx, stamp)
        : null;
    const identity = found instanceof Promise ? await found : found;
    const readSet = into ?? emptyReadSet();
    const db = new DatabaseReaderImpl(this.catalog, tx, readSet);
    const catalog = this.catalog;
    let connections: ConnectionsReader | undefined;
    let scheduledJobs: ScheduledJobsReader | undefined;
    const ctx: QueryCtx = {
      db,
      auth: staticAuth(identity, caller.token ?? null),
      meta: caller.meta ?? {},
      env: this.env,
      // Made when first used, as the mutation's below. Same snapshot and read set: a live query
      // listing connections follows them.
      get connections() {
        return (connections ??= connectionsReader(new DatabaseReaderImpl(catalog, tx, readSet, true)));
      },
      get scheduledJobs() {
        return (scheduledJobs ??= scheduledJobsReader(new DatabaseReaderImpl(catalog, tx, readSet, true)));
      },
    };
    const value = await fn.handler(ctx, args);
    return { value: value === undefined ? null : value, readSet };
  }

  /** Runs a mutation as one transaction; publishes its write set after the commit. */
  async runMutation(
    ref: FunctionReference | string,
    args: unknown,
    caller: Caller = {},
  ): Promise<{ value: unknown; sequence: number }> {
    const fn = this.lookup(functionPath(ref), "mutation", caller.allowInternal);
    const parsed = parseArgs(fn, args);
    const entry = this.transactions.current();
    if (entry) {
      // Joins the scope's transaction: committed (and published) with it, never on its own.
      const { scope } = entry;
      const value = await this.transactions.mutateInTurn(entry, () =>
        this.mutate(fn, parsed, caller, scope.tx, scope.writes, this.commits.stamp()),
      );
      return { value: value === undefined ? null : value, sequence: this.commits.lastSequence };
    }
    const stamp = this.commits.stamp();
    const transaction = () =>
      this.transactions.write((tx, writes) => this.mutate(fn, parsed, caller, tx, writes, stamp));
    const value = await (caller.trace
      ? inChildSpan(caller.trace, "db.transaction write", transaction)
      : transaction());
    return { value: value === undefined ? null : value, sequence: this.commits.lastSequence };
  }

  /** Runs a mutation's handler in `tx`, recording its writes into `writes`. */
  private async mutate(
    fn: RegisteredFunction,
    args: unknown,
    caller: Caller,
    tx: WriteTransaction,
    writes: DocumentWrite[],
    stamp: Stamp,
  ): Promise<unknown> {
    const identity = await this.identityFor(caller, tx, stamp);
    const db = new DatabaseWriterImpl(this.catalog, tx, emptyReadSet(), writes);
    let scheduler: Scheduler | undefined;
    let connections: ConnectionsWriter | undefined;
    let scheduledJobs: ScheduledJobsReader | undefined;
    const backend = this;
    const ctx: MutationCtx = {
      db,
      auth: staticAuth(identity, caller.token ?? null),
      meta: caller.meta ?? {},
      env: this.env,
      // The system-table views are made when first used: most mutations use none, and each is a
      // writer and an object of closures (0.6 KB a mutation, measured with V8's sampling heap profiler).
      get connections() {
        return (connections ??= connectionsWriter(
          new DatabaseWriterImpl(backend.catalog, tx, emptyReadSet(), writes, true),
        ));
      },
      get scheduledJobs() {
        return (scheduledJobs ??= scheduledJobsReader(
          new DatabaseWriterImpl(backend.catalog, tx, emptyReadSet(), writes, true),
        ));
      },
      // Its jobs are this transaction's writes.
      get scheduler() {
        return (scheduler ??= schedulerOn(
          (write) => write(new DatabaseWriterImpl(backend.catalog, tx, emptyReadSet(), writes, true)),
          backend.lookupSchedulable,
        ));
      },
    };
    return fn.handler(ctx, args);
  }

  /** A function a job may run: any mutation or action, internal ones included. */
  private readonly lookupSchedulable = (path: string) => this.lookup(path, undefined, true);

  /**
   * The scheduler's exactly-once run (scheduler/runner.ts): `claim(db)` (system tables writable)
   * and, when it returns true, the mutation at `path`, in one transaction, published as one commit.
   * @internal
   */
  async runMutationClaimed(
    path: string,
    args: unknown,
    claim: (db: DatabaseWriterImpl) => Promise<boolean>,
  ): Promise<{ ran: boolean; value: unknown }> {
    const fn = this.lookup(path, "mutation", true);
    const parsed = parseArgs(fn, args);
    const stamp = this.commits.stamp();
    return this.transactions.write(async (tx, writes) => {
      if (!(await claim(new DatabaseWriterImpl(this.catalog, tx, emptyReadSet(), writes, true))))
        return { ran: false, value: null };
      const value = await this.mutate(fn, parsed, { allowInternal: true }, tx, writes, stamp);
      return { ran: true, value: value === undefined ? null : value };
    });
  }

  /**
   * Runs `fn` as one write transaction that the queries and mutations it calls join (see
   * `ActionCtx.runInTransaction`); publishes the writes after the commit. Inside a scope already,
   * `fn` simply runs in it.
   */
  runInTransaction<T>(fn: () => Promise<T>): Promise<T> {
    return this.transactions.run(fn);
  }

  /** Runs an action: no database, but it can call queries, mutations and other actions. */
  async runAction(ref: FunctionReference | string, args: unknown, caller: Caller = {}): Promise<unknown> {
    const fn = this.lookup(functionPath(ref), "action", caller.allowInternal);
    const parsed = parseArgs(fn, args);
    const ctx = await this.actionCtx(caller);
    const value = await fn.handler(ctx, parsed);
    return value === undefined ? null : value;
  }

  /**
   * The ctx of an action or HTTP action. The identity is resolved at most once, when first asked
   * for (by the action or by a function it calls), so routes that never ask never pay for it.
   */
  async actionCtx(caller: Caller, eager = true): Promise<ActionCtx> {
    const lazyIdentity =
      caller.identity !== undefined
        ? async () => caller.identity ?? null
        : (caller.lazyIdentity ?? this.identityOnce(caller.token, caller.meta ?? {}));
    if (eager) await lazyIdentity();
    const inner: Caller = { token: caller.token, meta: caller.meta, lazyIdentity, allowInternal: true };
    return {
      auth: { getUserIdentity: lazyIdentity, getToken: () => caller.token ?? null },
      meta: caller.meta ?? {},
      env: this.env,
      scheduler: schedulerOn((write) => this.write(write), this.lookupSchedulable),
      runQuery: async (ref, args) => (await this.runQuery(ref, args, inner)).value as any,
      runMutation: async (ref, args) => (await this.runMutation(ref, args, inner)).value as any,
      runAction: (ref, args) => this.runAction(ref, args, inner) as any,
      runInTransaction: (fn) => this.runInTransaction(fn),
    };
  }

  /**
   * An action's identity, resolved once (see {@link actionCtx}). Asked from inside a transaction
   * (the mutation's own, or a `runInTransaction` scope's), steps 1+2 read in it: a snapshot of
   * their own would need a second connection while this one is held, and with every pooled
   * connection held by such a caller, none would come (PostgreSQL; docs/decisions.md 37).
   */
  private identityOnce(
    token: string | null | undefined,
    meta: RequestMeta,
  ): (within?: CallTransaction) => Promise<UserIdentity | null> {
    if (!token) return async () => null;
    // Taken when the action began, before any scope's transaction: step 2 sees what it must.
    const stamp = this.commits.stamp();
    let pending: Promise<UserIdentity | null> | undefined;
    const resolve = (within: CallTransaction | undefined): Promise<UserIdentity | null> => {
      const entry = this.transactions.current();
      if (entry) {
        // Before any write of the scope: every call joined to it asks first (`identityFor`), and
        // only a failed resolution is asked again. So step 2 reads committed state here, and its
        // result may be cached like any other.
        const { tx } = entry.scope;
        return this.transactions.inTurn(entry, () =>
          Promise.resolve(this.authenticator.identity(token, meta, tx, stamp)),
        );
      }
      if (within) return Promise.resolve(this.authenticator.identity(token, meta, within.tx, within.stamp));
      return this.authenticate(token, meta).then((a) => a.identity);
    };
    return (within) => {
      if (pending) return pending;
      // A transaction that failed under it (a conflict retried, a lost connection) must not fail
      // the action's later calls: the next one resolves again.
      const resolving = resolve(within).catch((error: unknown) => {
        if (pending === resolving) pending = undefined;
        throw error;
      });
      pending = resolving;
      return resolving;
    };
  }

  /** Runs an HTTP action with a web-standard Request. */
  async runHttpAction(action: HttpAction, request: Request, caller: Caller): Promise<Response> {
    return action.handler(await this.actionCtx(caller, false), request);
  }

  /** Internal reads outside any registered function (env store, health checks). */
  async read<T>(fn: (db: DatabaseReaderImpl) => Promise<T>): Promise<T> {
    return this.engine.read((tx) => fn(new DatabaseReaderImpl(this.catalog, tx, emptyReadSet(), true)));
  }

  /** Internal writes outside any registered function; published like a mutation's. */
  write<T>(fn: (db: DatabaseWriterImpl) => Promise<T>): Promise<T> {
    return this.transactions.write((tx, writes) =>
      fn(new DatabaseWriterImpl(this.catalog, tx, emptyReadSet(), writes, true)),
    );
  }

  async close(): Promise<void> {
    await this.engine.close();
  }
}
