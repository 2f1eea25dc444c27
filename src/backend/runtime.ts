/**
 * The function runtime: resolves `module:name` paths, validates arguments, runs queries in read
 * snapshots and mutations in write transactions, authenticates callers (step 1 via the JWT
 * verifier, step 2 via the installed identity resolver) and publishes every commit's write set.
 */

import { IdentityCache } from "./auth/identity-cache.ts";
import { TokenError } from "./auth/jwks-source.ts";
import { createJwtVerifier, type JwtProviderConfig, type JwtVerifier } from "./auth/jwt-verifier.ts";
import { Catalog } from "./db/catalog.ts";
import { DatabaseReaderImpl, DatabaseWriterImpl } from "./db/database.ts";
import { type Commit, type DocumentWrite, emptyReadSet, type ReadSet } from "./db/read-write-sets.ts";
import { EnvStore } from "./env/store.ts";
import { ServiceError } from "./errors.ts";
import type {
  ActionCtx,
  Auth,
  FunctionKind,
  HttpAction,
  MutationCtx,
  QueryCtx,
  RegisteredFunction,
  RequestMeta,
  UserIdentity,
} from "./functions/define.ts";
import { isRegisteredFunction } from "./functions/define.ts";
import { type FunctionReference, functionPath } from "./functions/references.ts";
import { logger } from "./logger.ts";
import type { SchemaDefinition } from "./schema.ts";
import { decodeWrites, encodeWrites } from "./storage/commit-payload.ts";
import type { ReadTransaction, StorageEngine } from "./storage/engine.ts";
import { validate } from "./values/validate.ts";

/**
 * Step 2 of authentication, installed by an auth integration: given the verified claims, confirm
 * the caller against the database (e.g. the session exists and is unexpired) and return the
 * identity functions will see. Throw `ServiceError("UNAUTHORIZED" | "ACCOUNT_BANNED", …)` to refuse.
 * Its reads are recorded, so a live connection can watch exactly what its identity depends on.
 */
export type IdentityResolver = (claims: Record<string, unknown>, ctx: QueryCtx) => Promise<UserIdentity>;

/** The platform's auth configuration (SPEC §4.3 "auth config"). */
export interface AuthConfig {
  /** JWT providers; a function is re-read so providers can follow the env store (e.g. `JWKS`). */
  providers: JwtProviderConfig[];
  resolveIdentity?: IdentityResolver;
}

export interface BackendOptions {
  schema: SchemaDefinition;
  /** Function modules: `{ messages: { list, send }, "admin/users": {...} }`. */
  modules: Record<string, Record<string, unknown>>;
  engine: StorageEngine;
  auth?: AuthConfig | ((env: EnvStore) => AuthConfig);
}

/** Who is calling and how; built by the transports. */
export interface Caller {
  /** Bearer token presented by the caller, if any. */
  token?: string | null;
  /** Identity already established (a WebSocket caches it per connection). */
  identity?: UserIdentity | null;
  /** Identity resolved on first use (HTTP actions: routes that never ask never pay for it). */
  lazyIdentity?: () => Promise<UserIdentity | null>;
  meta?: RequestMeta;
  /** CLI and server-internal calls may run internal functions. */
  allowInternal?: boolean;
}

export interface Authenticated {
  identity: UserIdentity;
  /** What the identity depends on (session and user documents). */
  readSet: ReadSet;
  /** `exp` of the token, in seconds. */
  expiresAt?: number;
}

type CommitListener = (commit: Commit) => void;

export class Backend {
  readonly catalog: Catalog;
  readonly engine: StorageEngine;
  readonly env: EnvStore;
  private readonly functions = new Map<string, RegisteredFunction>();
  private readonly commitListeners = new Set<CommitListener>();
  private sequence = 0;
  private authConfig?: AuthConfig;
  private verifier?: JwtVerifier;
  /** Steps 1+2 results per token; see identity-cache.ts for why this is safe. */
  private readonly identities = new IdentityCache();
  private readonly authSource?: BackendOptions["auth"];

  constructor(options: BackendOptions) {
    this.catalog = new Catalog(options.schema);
    this.engine = options.engine;
    this.env = new EnvStore(this);
    this.authSource = options.auth;
    for (const [moduleName, exports] of Object.entries(options.modules)) {
      for (const [name, value] of Object.entries(exports)) {
        if (isRegisteredFunction(value)) this.functions.set(`${moduleName}:${name}`, value);
      }
    }
  }

  /** Migrates storage, loads the env store and watches for commits of other processes. */
  async start(): Promise<void> {
    await this.engine.migrate(this.catalog.layout(), this.catalog.keysOf);
    await this.env.load();
    this.env.onChange(() => this.configureAuth());
    this.engine.onExternalCommit((payload) => {
      // Another instance's exact write set when it was sent (`_env` writes reload env in publish);
      // otherwise re-check everything.
      const writes = decodeWrites(payload);
      if (writes) return this.publish(writes);
      void this.env.load().catch((e) => logger.error("env reload failed", { error: String(e) }));
      this.publish([], true);
    });
    this.configureAuth();
  }

  /** (Re)builds the JWT verifier from the auth config; called again when env changes. */
  configureAuth(): void {
    if (!this.authSource) return;
    this.authConfig = typeof this.authSource === "function" ? this.authSource(this.env) : this.authSource;
    this.verifier = this.authConfig.providers.length
      ? createJwtVerifier(this.authConfig.providers)
      : undefined;
    // New key set or settings: nothing verified under the old ones may be reused.
    this.identities.clear();
  }

  /** Registered function at `path`, or a 404 error. */
  lookup(path: string, kind?: FunctionKind, allowInternal = false): RegisteredFunction {
    const fn = this.functions.get(path);
    if (!fn || (fn.visibility === "internal" && !allowInternal)) {
      throw new ServiceError("FUNCTION_NOT_FOUND", `No function "${path}"`);
    }
    if (kind && fn.kind !== kind) {
      throw new ServiceError("FUNCTION_NOT_FOUND", `"${path}" is a ${fn.kind}, not a ${kind}`);
    }
    return fn;
  }

  functionPaths(): string[] {
    return [...this.functions.keys()];
  }

  onCommit(listener: CommitListener): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  private publish(writes: DocumentWrite[], unknown = false): void {
    // Before anyone hears of the commit: a revoked session or banned user must not hit the cache.
    this.identities.commit(this.sequence + 1, unknown ? null : writes);
    const commit: Commit = { sequence: ++this.sequence, writes, unknown };
    if (!unknown && writes.some((w) => w.table === "_env")) {
      void this.env.load().catch((e) => logger.error("env reload failed", { error: String(e) }));
    }
    for (const l of this.commitListeners) {
      try {
        l(commit);
      } catch (e) {
        logger.error("commit listener failed", { error: String(e) });
      }
    }
  }

  /** The sequence number of the last published commit. */
  get lastSequence(): number {
    return this.sequence;
  }

  // ------------------------------------------------------------------------------ auth

  /** Step 1: verifies the token's signature, expiry, issuer and audience. */
  async verifyToken(token: string): Promise<Record<string, unknown>> {
    if (!this.verifier) throw new ServiceError("UNAUTHORIZED", "Authentication is not configured");
    try {
      return (await this.verifier.verify(token)).payload;
    } catch (e) {
      if (e instanceof TokenError) {
        throw new ServiceError("UNAUTHORIZED", e.message, { data: { reason: e.code } });
      }
      throw e;
    }
  }

  private async resolve(claims: Record<string, unknown>, ctx: QueryCtx): Promise<UserIdentity> {
    if (this.authConfig?.resolveIdentity) return this.authConfig.resolveIdentity(claims, ctx);
    const subject = String(claims.sub ?? "");
    const issuer = String(claims.iss ?? "");
    return { ...claims, subject, issuer, tokenIdentifier: `${issuer}|${subject}` };
  }

  /**
   * Drops every cached steps-1+2 result, so the next request with any token is verified and
   * looked up again (after editing session or user rows behind the backend's back, or to
   * measure the uncached cost).
   */
  forgetIdentities(): void {
    this.identities.clear();
  }

  /** Steps 1 and 2 for a token; used by the WebSocket at connect and re-authentication. */
  async authenticate(token: string, meta: RequestMeta = {}): Promise<Authenticated> {
    const cached = this.identities.get(token);
    if (cached) return { identity: cached.identity, readSet: cached.readSet, expiresAt: cached.exp };
    // Taken before step 1: a key rotation while this runs must keep the result out of the cache.
    const epoch = this.identities.epoch;
    const claims = await this.verifyToken(token);
    const readSet = emptyReadSet();
    const since = this.sequence;
    const identity = await this.engine.read(async (tx) => {
      const db = new DatabaseReaderImpl(this.catalog, tx, readSet);
      return this.resolve(claims, { db, auth: staticAuth(null, token), meta, env: this.env });
    });
    const exp = typeof claims.exp === "number" ? claims.exp : undefined;
    this.identities.set(token, identity, readSet, exp, since, epoch);
    return { identity, readSet, expiresAt: exp };
  }

  /** Identity for one call: cached on the caller or per token, else steps 1+2 with `db` (same snapshot as the call). */
  private async identityFor(caller: Caller, tx: ReadTransaction): Promise<UserIdentity | null> {
    if (caller.identity !== undefined) return caller.identity;
    if (caller.lazyIdentity) return caller.lazyIdentity();
    const token = caller.token;
    if (!token) return null;
    const cached = this.identities.get(token);
    if (cached) return cached.identity;
    const since = this.sequence;
    const epoch = this.identities.epoch;
    const claims = await this.verifyToken(token);
    const readSet = emptyReadSet();
    const db = new DatabaseReaderImpl(this.catalog, tx, readSet);
    const identity = await this.resolve(claims, {
      db,
      auth: staticAuth(null, token),
      meta: caller.meta ?? {},
      env: this.env,
    });
    this.identities.set(
      token,
      identity,
      readSet,
      typeof claims.exp === "number" ? claims.exp : undefined,
      since,
      epoch,
    );
    return identity;
  }

  // ------------------------------------------------------------------------------ execution

  private args(fn: RegisteredFunction, args: unknown): Record<string, unknown> {
    const value = args ?? {};
    if (typeof value !== "object" || Array.isArray(value)) {
      throw new ServiceError("INVALID_ARGUMENTS", "args must be an object");
    }
    if (fn.args) validate({ kind: "object", fields: fn.args, isOptional: false }, value, "args");
    return value as Record<string, unknown>;
  }

  /** Runs a query in one read snapshot; returns its value and exact read set. */
  async runQuery(
    ref: FunctionReference | string,
    args: unknown,
    caller: Caller = {},
    /** Collects the reads here (also when the query throws: live subscriptions re-run failed queries). */
    into?: ReadSet,
  ): Promise<{ value: unknown; readSet: ReadSet }> {
    const fn = this.lookup(functionPath(ref), "query", caller.allowInternal);
    const parsed = this.args(fn, args);
    return this.engine.read(async (tx) => {
      // Identity reads are not part of the query's read set: the connection watches them itself.
      // An anonymous caller skips the call (and its await): nothing to resolve.
      const identity =
        caller.token || caller.identity !== undefined || caller.lazyIdentity
          ? await this.identityFor(caller, tx)
          : null;
      const readSet = into ?? emptyReadSet();
      const db = new DatabaseReaderImpl(this.catalog, tx, readSet);
      const ctx: QueryCtx = {
        db,
        auth: staticAuth(identity, caller.token ?? null),
        meta: caller.meta ?? {},
        env: this.env,
      };
      const value = await fn.handler(ctx, parsed);
      return { value: value === undefined ? null : value, readSet };
    });
  }

  /** Runs a mutation as one transaction; publishes its write set after the commit. */
  async runMutation(
    ref: FunctionReference | string,
    args: unknown,
    caller: Caller = {},
  ): Promise<{ value: unknown; sequence: number }> {
    const fn = this.lookup(functionPath(ref), "mutation", caller.allowInternal);
    const parsed = this.args(fn, args);
    let writes: DocumentWrite[] = [];
    const value = await this.engine.write(async (tx) => {
      writes = [];
      const readSet = emptyReadSet();
      const identity = await this.identityFor(caller, tx);
      const db = new DatabaseWriterImpl(this.catalog, tx, readSet, writes);
      const ctx: MutationCtx = {
        db,
        auth: staticAuth(identity, caller.token ?? null),
        meta: caller.meta ?? {},
        env: this.env,
      };
      return fn.handler(ctx, parsed);
    });
    if (writes.length) this.committed(writes);
    return { value: value === undefined ? null : value, sequence: this.sequence };
  }

  /** Runs an action: no database, but it can call queries, mutations and other actions. */
  async runAction(ref: FunctionReference | string, args: unknown, caller: Caller = {}): Promise<unknown> {
    const fn = this.lookup(functionPath(ref), "action", caller.allowInternal);
    const parsed = this.args(fn, args);
    const ctx = await this.actionCtx(caller);
    const value = await fn.handler(ctx, parsed);
    return value === undefined ? null : value;
  }

  /**
   * The ctx of an action or HTTP action. The identity is resolved at most once, when first asked
   * for (by the action or by a function it calls), so routes that never ask never pay for it.
   */
  async actionCtx(caller: Caller, eager = true): Promise<ActionCtx> {
    let pending: Promise<UserIdentity | null> | undefined;
    const lazyIdentity =
      caller.identity !== undefined
        ? async () => caller.identity ?? null
        : (caller.lazyIdentity ??
          (() =>
            (pending ??= caller.token
              ? this.authenticate(caller.token, caller.meta).then((a) => a.identity)
              : Promise.resolve(null))));
    if (eager) await lazyIdentity();
    const inner: Caller = { token: caller.token, meta: caller.meta, lazyIdentity, allowInternal: true };
    return {
      auth: { getUserIdentity: lazyIdentity, getToken: () => caller.token ?? null },
      meta: caller.meta ?? {},
      env: this.env,
      runQuery: async (ref, args) => (await this.runQuery(ref, args, inner)).value as any,
      runMutation: async (ref, args) => (await this.runMutation(ref, args, inner)).value as any,
      runAction: (ref, args) => this.runAction(ref, args, inner) as any,
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
  async write<T>(fn: (db: DatabaseWriterImpl) => Promise<T>): Promise<T> {
    let writes: DocumentWrite[] = [];
    const value = await this.engine.write(async (tx) => {
      writes = [];
      return fn(new DatabaseWriterImpl(this.catalog, tx, emptyReadSet(), writes, true));
    });
    if (writes.length) this.committed(writes);
    return value;
  }

  /** Announces a commit here and to other instances (env changes made here must reach them too). */
  private committed(writes: DocumentWrite[]): void {
    this.publish(writes);
    void this.engine
      .publishCommit(encodeWrites(writes))
      .catch((e) => logger.error("commit announcement failed", { error: String(e) }));
  }

  async close(): Promise<void> {
    await this.engine.close();
  }
}

/** `ctx.auth` of every call without identity or token: shared (and frozen) rather than rebuilt per call. */
const ANONYMOUS_AUTH: Auth = Object.freeze({
  getUserIdentity: async () => null,
  getToken: () => null,
});

function staticAuth(identity: UserIdentity | null, token: string | null): Auth {
  if (identity === null && token === null) return ANONYMOUS_AUTH;
  return {
    getUserIdentity: async () => identity,
    getToken: () => token,
  };
}
