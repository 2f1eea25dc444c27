/**
 * Authentication of a bearer token, in one place for every transport (HTTP calls, the WebSocket,
 * actions): step 1 verifies the JWT (signature, expiry, issuer, audience), step 2 runs the
 * installed identity resolver, which confirms the caller against the database (session and user
 * rows); the per-token identity cache (identity-cache.ts) remembers the result. A cached result
 * is served only once the commits core confirmed the request's stamp (`Commits.confirm`: where
 * other instances share the database, every commit made before the request has been delivered
 * here); the invariant this keeps is stated in commits/commits.ts. A token whose signing key is
 * unknown here is refused only after catching up with the other instances' commits (a key rotated
 * elsewhere; bounded, see key-catch-up.ts).
 */
import type { Commits, Stamp } from "../commits/commits.ts";
import type { Catalog } from "../db/catalog.ts";
import { emptyReadSet, type ReadSet } from "../db/read-write-sets.ts";
import { AppError } from "../errors.ts";
import type { EnvReader, QueryCtx, RequestMeta, UserIdentity } from "../functions/define.ts";
import { authMetrics, countAuthOutcome, tokenOutcomeOf } from "../metrics/metrics.ts";
import type { ReadTransaction, StorageEngine } from "../storage/engine.ts";
import { inChildSpan, type TraceParent } from "../tracing/tracing.ts";
import { IdentityCache } from "./identity-cache.ts";
import { identityCtx, identityOfClaims } from "./identity-ctx.ts";
import {
  createJwtVerifier,
  type JwtProviderConfig,
  type JwtVerifier,
  type VerifiedToken,
} from "./jwt-verifier.ts";
import { KeyCatchUp } from "./key-catch-up.ts";
import { TokenError, TokenKeyUnknown } from "./token-errors.ts";

/**
 * Step 2 of authentication, installed by an auth integration: given the verified claims, confirm
 * the caller against the database (e.g. the session exists and is unexpired) and return the
 * identity functions will see. Throw `AppError("UNAUTHORIZED" | "ACCOUNT_BANNED", …)` to refuse.
 * Its reads are recorded, so a live connection can watch exactly what its identity depends on.
 *
 * @example
 * ```ts
 * import { AppError, type IdentityResolver } from "service-auth/server";
 *
 * const resolveIdentity: IdentityResolver = async (claims, ctx) => {
 *   const user = await ctx.db.get("user", String(claims.sub));
 *   if (!user) throw new AppError("UNAUTHORIZED", "Unknown user");
 *   return { subject: String(claims.sub), issuer: String(claims.iss), tokenIdentifier: `${claims.iss}|${claims.sub}` };
 * };
 * ```
 */
export type IdentityResolver = (claims: Record<string, unknown>, ctx: QueryCtx) => Promise<UserIdentity>;

/**
 * The platform's auth configuration (requirements §4.3 "auth config").
 *
 * @example
 * ```ts
 * import type { AuthConfig, BackendEnv } from "service-auth/server";
 *
 * const auth = (env: BackendEnv): AuthConfig => ({
 *   providers: [
 *     { issuer: "https://auth.example.com", audience: "service-auth", getJwks: () => env.get("JWKS") },
 *   ],
 * });
 * // startService({ schema, modules, auth });
 * ```
 */
export interface AuthConfig {
  /** JWT providers; a function is re-read so providers can follow the env store (e.g. `JWKS`). */
  providers: JwtProviderConfig[];
  resolveIdentity?: IdentityResolver;
}

/** The outcome of steps 1+2 for a token. */
export interface Authenticated {
  identity: UserIdentity;
  /** What the identity depends on (session and user documents). */
  readSet: ReadSet;
  /** `exp` of the token, in seconds. */
  expiresAt?: number;
}

/** What the authenticator reads with. */
export interface AuthenticatorDeps {
  catalog: Catalog;
  engine: StorageEngine;
  env: EnvReader;
  /** Stamps, confirms and invalidates (the identity cache listens in its `invalidate` phase). */
  commits: Commits;
  /**
   * Resolves once the env reloads that caught-up commits started have been applied (a new `JWKS`
   * reconfigures the verifier); absent when the env cannot change behind this process's back.
   */
  envSettled?: () => Promise<void>;
}

export class Authenticator {
  private config?: AuthConfig;
  private verifier?: JwtVerifier;
  /** Steps 1+2 results per token; see identity-cache.ts for why this is safe. */
  private readonly cache: IdentityCache;
  /** Catching up before refusing a token of an unknown key (a rotation on another instance). */
  private readonly keyCatchUp: KeyCatchUp;

  constructor(private readonly deps: AuthenticatorDeps) {
    this.cache = new IdentityCache(deps.commits);
    this.keyCatchUp = new KeyCatchUp({
      catchUp: () => deps.commits.confirm(deps.commits.stamp()),
      settled: deps.envSettled ?? (() => Promise.resolve()),
    });
  }

  /** Installs a new auth config (new key set or settings): nothing verified before may be reused. */
  configure(config: AuthConfig): void {
    this.config = config;
    this.verifier = config.providers.length ? createJwtVerifier(config.providers) : undefined;
    this.cache.clear();
  }

  /** Drops every cached steps-1+2 result. */
  forget(): void {
    this.cache.clear();
  }

  /**
   * Step 1: verifies the token's signature, expiry, issuer and audience. A token whose key is not
   * in the key set is verified once more after catching up with the commits of other instances
   * (one may have rotated the keys a moment ago), and only then refused.
   */
  async verifyToken(token: string): Promise<Record<string, unknown>> {
    return this.claimsNow(token);
  }

  /**
   * Step 1 without a promise where none is needed: the verified claims, or the refusal thrown, at
   * once when the keys are at hand; a promise while keys are fetched or after an unknown key.
   */
  private claimsNow(token: string): Record<string, unknown> | Promise<Record<string, unknown>> {
    const verifier = this.verifier;
    if (!verifier) throw notConfigured();
    let verified: VerifiedToken | Promise<VerifiedToken>;
    try {
      verified = verifier.verifyNow(token);
    } catch (e) {
      return this.afterRefusal(e, verifier, token);
    }
    if (verified instanceof Promise)
      return verified.then(payloadOf, (e: unknown) => this.afterRefusal(e, verifier, token));
    return verified.payload;
  }

  /**
   * A refused step 1: as the 401 every transport answers, except for a token of a key unknown
   * here, verified once more after catching up with the other instances (a key rotated elsewhere).
   */
  private afterRefusal(e: unknown, verifier: JwtVerifier, token: string): Promise<Record<string, unknown>> {
    if (!(e instanceof TokenKeyUnknown)) return tokenRefused(e);
    return this.keyCatchUp.run().then(() => {
      // A new `JWKS` the catch-up brought has rebuilt the verifier (`configure`); otherwise the
      // keys are those that just refused the token.
      if (!this.verifier || this.verifier === verifier) return tokenRefused(e);
      return this.verifier.verify(token).then(payloadOf, tokenRefused);
    });
  }

  /**
   * Steps 1 and 2 for `token`, or the cached result. Step 2 reads in `tx` when given (a function
   * call's own snapshot; pass it before the transaction's first read), else in a snapshot of its own.
   */
  authenticate(token: string, meta: RequestMeta = {}, tx?: ReadTransaction): Promise<Authenticated> {
    // Not async: an uncached call hands on verifyAndResolve's promise instead of wrapping it.
    if (!this.cache.get(token)) {
      authMetrics.cacheMiss();
      return this.verifyAndResolve(token, meta, tx);
    }
    authMetrics.cacheHit();
    return this.confirmCached(token, meta, tx);
  }

  /** `authenticate` with a cached result: trusted once the request's stamp is confirmed. */
  private async confirmCached(
    token: string,
    meta: RequestMeta,
    tx?: ReadTransaction,
  ): Promise<Authenticated> {
    await this.deps.commits.confirm(this.deps.commits.stamp(), tx);
    const cached = this.cache.get(token);
    if (cached) return { identity: cached.identity, readSet: cached.readSet, expiresAt: cached.exp };
    return this.verifyAndResolve(token, meta, tx);
  }

  /**
   * `authenticate`'s identity alone. A cache hit answers synchronously: it is the hot path of every
   * function call with a token, where a promise and a result object per call are measurable.
   * `stamp`: taken when the call arrived, before `tx` began (its snapshot may be older than this
   * call: PostgreSQL's read snapshot starts at BEGIN, which asks for the commit log's head).
   */
  identity(
    token: string,
    meta: RequestMeta,
    tx: ReadTransaction,
    stamp: Stamp,
    trace?: TraceParent,
  ): UserIdentity | Promise<UserIdentity> {
    const cached = this.cache.get(token);
    if (!cached) {
      authMetrics.cacheMiss();
      return this.verifyAndResolve(token, meta, tx, stamp, trace).then((a) => a.identity);
    }
    if (trace) trace.span.setAttribute("service_auth.identity_cache", "hit");
    authMetrics.cacheHit();
    const confirming = this.deps.commits.confirm(stamp, tx);
    if (!confirming) return cached.identity;
    // Caught up: the commits that arrived may have dropped the entry (a revocation elsewhere).
    return confirming.then(
      (moved) =>
        (moved ? this.cache.get(token)?.identity : cached.identity) ??
        this.verifyAndResolve(token, meta, tx, stamp, trace).then((a) => a.identity),
    );
  }

  /**
   * Steps 1 and 2, uncached; stores the result unless something it depends on changed meanwhile.
   * Step 1 is synchronous when the keys are at hand, and step 2's promise gets one `.then`: Better
   * Auth keeps AsyncLocalStorage active, so every promise (and every `await`, which makes one more
   * under async hooks) runs async-hook callbacks, a measurable share of this path.
   */
  private verifyAndResolve(
    token: string,
    meta: RequestMeta,
    tx?: ReadTransaction,
    given?: Stamp,
    trace?: TraceParent,
  ): Promise<Authenticated> {
    // Taken before step 1 and before any await: a key rotation, or a commit touching what step 2
    // reads, while this runs keeps the result out of the cache. The stamp must not count a commit
    // the snapshot misses: for a given `tx` the caller took it before the transaction began;
    // otherwise the snapshot (`engine.read` below) starts later than now.
    const stamp = given ?? this.deps.commits.stamp();
    let claims: Record<string, unknown> | Promise<Record<string, unknown>>;
    try {
      claims = trace
        ? inChildSpan(trace, "auth.verify_token", () => this.verifyToken(token))
        : this.claimsNow(token);
    } catch (error) {
      return Promise.reject(counted(error));
    }
    if (claims instanceof Promise)
      return claims.then((c) => this.resolveAndStore(c, token, meta, stamp, tx, trace), rethrowCounted);
    return this.resolveAndStore(claims, token, meta, stamp, tx, trace);
  }

  /**
   * Step 2 for verified `claims`, then the cache; a refusal of either step counted by its reason.
   * One `.then` on step 2's promise (not async/await, which makes two promises under async hooks).
   */
  private resolveAndStore(
    claims: Record<string, unknown>,
    token: string,
    meta: RequestMeta,
    stamp: Stamp,
    tx?: ReadTransaction,
    trace?: TraceParent,
  ): Promise<Authenticated> {
    const readSet = emptyReadSet();
    let resolving: Promise<UserIdentity>;
    try {
      resolving = trace
        ? inChildSpan(trace, "auth.resolve_identity", () => this.resolveIn(claims, token, meta, readSet, tx))
        : this.resolveIn(claims, token, meta, readSet, tx);
    } catch (error) {
      // A resolver that throws synchronously (in a given `tx`) still rejects.
      return Promise.reject(counted(error));
    }
    // Anonymous callback: tsx names named closures with a defineProperty per call.
    return resolving.then((identity): Authenticated => {
      try {
        const exp = typeof claims.exp === "number" ? claims.exp : undefined;
        this.cache.set(token, identity, readSet, exp, stamp);
        authMetrics.tokenAccepted();
        return { identity, readSet, expiresAt: exp };
      } catch (error) {
        throw counted(error);
      }
    }, rethrowCounted);
  }

  /** Step 2 in `tx` when given, else in a snapshot of its own, recording its reads into `readSet`. */
  private resolveIn(
    claims: Record<string, unknown>,
    token: string,
    meta: RequestMeta,
    readSet: ReadSet,
    tx?: ReadTransaction,
  ): Promise<UserIdentity> {
    const { catalog, env, engine } = this.deps;
    if (tx) return this.resolve(claims, identityCtx(catalog, tx, readSet, token, meta, env));
    return engine.read((snapshot) =>
      this.resolve(claims, identityCtx(catalog, snapshot, readSet, token, meta, env)),
    );
  }

  /** Step 2: the installed resolver, or by default the identity the claims describe. */
  private resolve(claims: Record<string, unknown>, ctx: QueryCtx): Promise<UserIdentity> {
    if (this.config?.resolveIdentity) return this.config.resolveIdentity(claims, ctx);
    return Promise.resolve(identityOfClaims(claims));
  }
}

/** Counts a refused (or failed) steps 1+2 by its reason; returns the error to throw on. */
function counted(error: unknown): unknown {
  countAuthOutcome("token", tokenOutcomeOf(error));
  return error;
}

/** A step 1 refusal that arrived as a rejection: counted, then thrown on. */
function rethrowCounted(error: unknown): never {
  throw counted(error);
}

const notConfigured = () => new AppError("UNAUTHORIZED", "Authentication is not configured");
const payloadOf = (verified: VerifiedToken) => verified.payload;

/** A token error as the 401 every transport answers; anything else unchanged. */
function tokenRefused(e: unknown): never {
  if (e instanceof TokenError) throw new AppError("UNAUTHORIZED", e.message, { data: { reason: e.code } });
  throw e;
}
