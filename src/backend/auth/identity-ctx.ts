/**
 * What step 2 of authentication (the identity resolver) runs with: a query ctx on the step's
 * snapshot, recording its reads, and the default identity when no resolver is installed.
 */
import type { Catalog } from "../db/catalog.ts";
import { connectionsReader } from "../db/connections.ts";
import { DatabaseReaderImpl } from "../db/database.ts";
import type { ReadSet } from "../db/read-write-sets.ts";
import type { EnvReader, QueryCtx, RequestMeta, UserIdentity } from "../functions/define.ts";
import { staticAuth } from "../functions/static-auth.ts";
import { scheduledJobsReader } from "../scheduler/jobs-reader.ts";
import type { ReadTransaction } from "../storage/engine.ts";

/** The ctx step 2 reads in: `snapshot`, recording into `readSet`; `ctx.auth` has the token only. */
export function identityCtx(
  catalog: Catalog,
  snapshot: ReadTransaction,
  readSet: ReadSet,
  token: string,
  meta: RequestMeta,
  env: EnvReader,
): QueryCtx {
  return {
    db: new DatabaseReaderImpl(catalog, snapshot, readSet),
    auth: staticAuth(null, token),
    meta,
    env,
    // Same snapshot and read set; made up front: getters with closures would give every ctx its
    // own hidden class.
    connections: connectionsReader(new DatabaseReaderImpl(catalog, snapshot, readSet, true)),
    scheduledJobs: scheduledJobsReader(new DatabaseReaderImpl(catalog, snapshot, readSet, true)),
  };
}

/**
 * The identity the claims describe: `{ ...claims, subject, issuer, tokenIdentifier }` with
 * `subject` = `sub`, `issuer` = `iss` and `tokenIdentifier` = `iss|sub`. Step 2 without a resolver
 * returns it; a resolver can start from it and add or replace fields. Spelled out rather than a
 * spread because on Node 20 new properties after a spread make fresh hidden classes on every call
 * (several µs and garbage per uncached authentication).
 *
 * @example
 * ```ts
 * import { identityOfClaims, type IdentityResolver } from "service-auth/server";
 *
 * const resolveIdentity: IdentityResolver = async (claims, ctx) => {
 *   const identity = identityOfClaims(claims);
 *   identity.plan = (await ctx.db.get("user", identity.subject))?.plan ?? "free";
 *   return identity;
 * };
 * ```
 */
export function identityOfClaims(claims: Record<string, unknown>): UserIdentity {
  const subject = String(claims.sub ?? "");
  const issuer = String(claims.iss ?? "");
  const identity = copyOwn(claims) as UserIdentity;
  identity.subject = subject;
  identity.issuer = issuer;
  identity.tokenIdentifier = `${issuer}|${subject}`;
  return identity;
}

/** A shallow copy of an object's own enumerable string-keyed properties, in order, as a spread makes it. */
function copyOwn(source: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    // An assignment to `__proto__` would set the prototype; a spread defines the property.
    if (key === "__proto__")
      Object.defineProperty(copy, key, {
        value: source[key],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else copy[key] = source[key];
  }
  return copy;
}
