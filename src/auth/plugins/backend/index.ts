/**
 * The `backend` Better Auth plugin: issues RS256 JWTs for the backend, keeps them in the
 * `service-auth.jwt` cookie, serves `GET {basePath}/backend/token` and `GET {basePath}/backend/jwks`,
 * and offers server-only `getLatestJwks` / `rotateKeys` for key management.
 *
 * It wraps Better Auth's own `jwt` plugin (signing, key storage, private-key encryption) and fixes
 * what the requirements need on top: algorithm, claims, cookie, static keys and the ban check (the rule itself
 * is identity.ts's, which applies it to every authenticated request).
 */
import type { BetterAuthPlugin } from "better-auth";
import { APIError, createAuthEndpoint, createAuthMiddleware, sessionMiddleware } from "better-auth/api";
import { jwt } from "better-auth/plugins";
import { createJwk, getJwtToken } from "better-auth/plugins/jwt";
import { advisoryLayer } from "../../advisories/plugin.ts";
import { BANNED_MESSAGE, isBanned } from "../../identity.ts";
import {
  DEFAULT_ALG,
  isActiveKey,
  parseStoredJwks,
  publicJwksOf,
  serializeJwks,
} from "../../keys/stored-jwks.ts";
import { usedTotpHook } from "../../one-time/used-totp.ts";
import { answeringMailFailures } from "./background.ts";
import { payloadWithRequiredClaims } from "./claims.ts";
import {
  type BackendPluginOptions,
  DEFAULT_BASE_PATH,
  DEFAULT_EXPIRATION_SECONDS,
  JWT_COOKIE_NAME,
} from "./options.ts";

export type { BackendPluginOptions } from "./options.ts";

/**
 * The read that refreshes the token of the current session (clients call it on load). Every other
 * JWT is issued because a response sets the session cookie, whatever its path.
 */
const REFRESH_PATH = "/get-session";

/**
 * Paths of the key endpoints. They are server-only (the router never serves them), but Better Auth
 * passes the path to every plugin hook, and hooks expect one (anonymous calls `ctx.path.startsWith`).
 */
export const KEY_PATHS = {
  getLatestJwks: "/backend/latest-jwks",
  rotateKeys: "/backend/rotate-keys",
  retireKeys: "/backend/retire-keys",
} as const;
/** Added to the token lifetime in a graceful rotation's default overlap: clock skew. */
const ROTATION_SKEW_SECONDS = 60;
const SERVER_ONLY_POST = { method: "POST", metadata: { SERVER_ONLY: true } } as const;

/** How `Set-Cookie` lines leave cookie `name`: set to a value, cleared, or untouched (the last line wins). */
export function cookieChange(lines: readonly string[], name: string): "set" | "cleared" | undefined {
  let change: "set" | "cleared" | undefined;
  for (const line of lines) {
    if (!isCookieLine(line, name)) continue;
    const [pair, ...attributes] = line.split(";").map((part) => part.trim());
    const ended = pair.length === name.length + 1 || attributes.some((a) => /^max-age=0$/i.test(a));
    change = ended ? "cleared" : "set";
  }
  return change;
}

function isCookieLine(line: string, name: string): boolean {
  return line.startsWith(`${name}=`);
}

/** A `Set-Cookie` line from Better Auth's cookie attributes. */
function serializeCookie(name: string, value: string, attributes: Record<string, unknown>): string {
  const parts = [`${name}=${value}`];
  if (attributes.maxAge !== undefined) parts.push(`Max-Age=${attributes.maxAge}`);
  if (attributes.domain) parts.push(`Domain=${attributes.domain}`);
  parts.push(`Path=${attributes.path ?? "/"}`);
  if (attributes.secure) parts.push("Secure");
  if (attributes.httpOnly) parts.push("HttpOnly");
  if (attributes.sameSite) {
    const sameSite = String(attributes.sameSite);
    parts.push(`SameSite=${sameSite[0].toUpperCase()}${sameSite.slice(1).toLowerCase()}`);
  }
  return parts.join("; ");
}

/**
 * Creates the plugin. Give it the platform's auth config (issuer and audience of tokens) and, in
 * production, the static key set from the `JWKS` variable.
 *
 * @example
 * ```ts
 * import { betterAuth } from "better-auth";
 * import { authConfig, backend } from "service-auth/auth";
 *
 * const auth = betterAuth({
 *   database: authData.httpAdapter(ctx),
 *   basePath: "/api/auth",
 *   plugins: [backend({ authConfig: authConfig(ctx.env), jwks: ctx.env.get("JWKS") })],
 * });
 * ```
 */
export const backend = (options: BackendPluginOptions) => {
  const provider = options.authConfig.providers[0];
  if (!provider) throw new Error("backend plugin: authConfig needs one JWT provider");
  const expirationSeconds = options.jwt?.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS;
  if (!Number.isInteger(expirationSeconds) || expirationSeconds < 1) {
    throw new Error("backend plugin: jwt.expirationSeconds must be a positive integer");
  }
  const basePath = options.options?.basePath ?? DEFAULT_BASE_PATH;
  // With dynamic keys the verifier fetches `{SITE_URL}{basePath}/backend/jwks`: the two base
  // paths must agree, or every token would fail verification with no hint why.
  if (provider.jwksUrl && !new URL(provider.jwksUrl).pathname.endsWith(`${basePath}/backend/jwks`)) {
    throw new Error(
      `backend plugin: authConfig fetches keys from ${provider.jwksUrl}, which is not under basePath "${basePath}"; pass the same basePath to authConfig(env, { basePath })`,
    );
  }
  const audience = Array.isArray(provider.audience) ? provider.audience[0] : provider.audience;
  const staticRows = options.jwks ? parseStoredJwks(options.jwks) : undefined;

  const jwtOptions: Parameters<typeof jwt>[0] = {
    disableSettingJwtHeader: true,
    // `expiresAt` (set only by a graceful rotation) is when a key stops verifying: no grace after it.
    jwks: { keyPairConfig: { alg: DEFAULT_ALG as "RS256", modulusLength: 2048 }, gracePeriod: 0 },
    jwt: {
      issuer: provider.issuer,
      audience,
      expirationTime: `${expirationSeconds}s`,
      definePayload: payloadWithRequiredClaims(options.jwt?.definePayload) as any,
    },
    ...(staticRows
      ? {
          adapter: {
            // Static keys: signing reads the variable, never the database, and never makes keys.
            // A key retired by a graceful rotation's overlap neither signs nor verifies.
            getJwks: async () =>
              staticRows
                .filter((r) => isActiveKey(r))
                .map((r) => ({
                  ...r,
                  createdAt: new Date(r.createdAt),
                  expiresAt: r.expiresAt === undefined ? undefined : new Date(r.expiresAt),
                  alg: (r.alg ?? DEFAULT_ALG) as "RS256",
                })),
            createJwk: async () => {
              throw new APIError("INTERNAL_SERVER_ERROR", {
                message: "JWKS is static; rotate keys with auth:rotateKeys",
              });
            },
          },
        }
      : {}),
  };
  /** The same options without the static override, for writing keys to the `jwks` table. */
  const storedKeyOptions: Parameters<typeof jwt>[0] = { ...jwtOptions, adapter: undefined };
  const inner = jwt(jwtOptions);
  const advisories = advisoryLayer(options.acceptAdvisories);

  const cookieFor = (ctx: any, maxAge: number) => ctx.context.createAuthCookie(JWT_COOKIE_NAME, { maxAge });

  const setJwtCookie = async (ctx: any) => {
    const token = await getJwtToken(ctx, jwtOptions);
    const cookie = cookieFor(ctx, expirationSeconds);
    ctx.setCookie(cookie.name, token, cookie.attributes);
    return token;
  };

  const readKeyRows = async (ctx: any) =>
    ((await ctx.context.adapter.findMany({ model: "jwks" })) as any[]).sort(
      (a, b) => new Date(a.createdAt).getTime() - new Date(b.createdAt).getTime(),
    );

  return {
    id: "backend",
    schema: inner.schema,
    // The advisories' defaults, and mail failures that end the request (background.ts).
    init: (ctx) => ({ ...advisories.init(ctx), context: answeringMailFailures(ctx) }),
    endpoints: {
      /** A fresh JWT for the current session (and the cookie); 401 without one, 403 when banned. */
      getBackendToken: createAuthEndpoint(
        "/backend/token",
        { method: "GET", requireHeaders: true, use: [sessionMiddleware] },
        async (ctx) => {
          if (isBanned(ctx.context.session.user as any)) {
            throw new APIError("FORBIDDEN", { message: BANNED_MESSAGE, code: "ACCOUNT_BANNED" });
          }
          const token = await setJwtCookie(ctx);
          return ctx.json({ token });
        },
      ),
      /** The public key set verifiers use (dynamic key mode fetches it). */
      getBackendJwks: createAuthEndpoint("/backend/jwks", { method: "GET" }, async (ctx) => {
        ctx.setHeader("Cache-Control", "public, max-age=60, stale-while-revalidate=60");
        if (options.jwks) return ctx.json(JSON.parse(publicJwksOf(options.jwks)));
        // (Better Auth leaves out keys past `expiresAt`, the graceful rotation's retirement.)
        const result = (await inner.endpoints.getJwks({
          ...ctx,
          returnHeaders: false,
          returnStatus: false,
        } as any)) as any;
        return ctx.json({ keys: (result.keys ?? result).map((k: any) => ({ ...k, use: "sig" })) });
      }),
      /** Server-only: the stored key set as the `JWKS` variable's value, making keys when none exist. */
      getLatestJwks: createAuthEndpoint(KEY_PATHS.getLatestJwks, SERVER_ONLY_POST, async (ctx) => {
        let rows = await readKeyRows(ctx);
        if (rows.length === 0) {
          await createJwk(ctx as any, storedKeyOptions);
          rows = await readKeyRows(ctx);
        }
        return ctx.json({ jwks: serializeJwks(rows) });
      }),
      /**
       * Server-only: a new signing key. Without `overlap` it replaces every key (every token issued
       * before becomes invalid). With it (`true`: the token lifetime and a minute; or seconds), the
       * new key signs at once and the keys in use keep verifying for that long
       * (their `expiresAt`; one already retiring sooner keeps its time), and `retireAt` says when
       * the last of them goes.
       */
      rotateKeys: createAuthEndpoint(KEY_PATHS.rotateKeys, SERVER_ONLY_POST, async (ctx) => {
        const asked = (ctx.body as { overlap?: unknown } | undefined)?.overlap;
        // `true`: until the last token the old keys signed has expired (its lifetime, plus a
        // minute for clock skew between instances and issuers).
        const overlap = asked === true ? expirationSeconds + ROTATION_SKEW_SECONDS : asked;
        if (overlap === undefined || overlap === false) {
          await ctx.context.adapter.deleteMany({ model: "jwks", where: [] });
          await createJwk(ctx as any, storedKeyOptions);
          return ctx.json({ jwks: serializeJwks(await readKeyRows(ctx)) });
        }
        // Shorter than a token's lifetime, the old key would go while tokens it signed are still
        // valid (and cached as verified): they would be refused mid-life, which the hard cut does
        // honestly. So the overlap covers at least the lifetime.
        if (typeof overlap !== "number" || !Number.isFinite(overlap) || overlap < expirationSeconds) {
          throw new APIError("BAD_REQUEST", {
            message: `overlap must be true or a number of seconds of at least the token lifetime (${expirationSeconds}); rotate without overlap for an immediate cut`,
          });
        }
        const now = Date.now();
        const retireAt = now + Math.ceil(overlap * 1000);
        for (const row of await readKeyRows(ctx)) {
          const expiresAt = row.expiresAt == null ? undefined : new Date(row.expiresAt).getTime();
          if (expiresAt !== undefined && expiresAt <= retireAt) continue;
          await ctx.context.adapter.update({
            model: "jwks",
            where: [{ field: "id", value: row.id }],
            update: { expiresAt: new Date(retireAt) },
          });
        }
        await createJwk(ctx as any, storedKeyOptions);
        return ctx.json({ jwks: serializeJwks(await readKeyRows(ctx)), retireAt });
      }),
      /** Server-only: deletes the keys whose overlap has ended; the remaining set as the `JWKS` value. */
      retireKeys: createAuthEndpoint(KEY_PATHS.retireKeys, SERVER_ONLY_POST, async (ctx) => {
        const retired: string[] = [];
        for (const row of await readKeyRows(ctx)) {
          if (
            isActiveKey({ expiresAt: row.expiresAt == null ? undefined : new Date(row.expiresAt).getTime() })
          )
            continue;
          await ctx.context.adapter.delete({ model: "jwks", where: [{ field: "id", value: row.id }] });
          retired.push(row.id);
        }
        return ctx.json({ jwks: serializeJwks(await readKeyRows(ctx)), retired });
      }),
    },
    /**
     * The final HTTP response, after every plugin's hooks: when it ends the session cookie (e.g.
     * two-factor replaced the sign-in session by a challenge in a hook that ran after ours), the
     * JWT cookie is ended too instead of carrying a token of a deleted session.
     */
    onResponse: async (response: Response, context: any) => {
      const lines = response.headers.getSetCookie();
      const sessionName = context.authCookies.sessionToken.name as string;
      const jwt = cookieFor({ context }, 0);
      if (cookieChange(lines, sessionName) !== "cleared" || cookieChange(lines, jwt.name) !== "set") return;
      const headers = new Headers();
      for (const [name, value] of response.headers) if (name !== "set-cookie") headers.append(name, value);
      for (const line of lines) if (!isCookieLine(line, jwt.name)) headers.append("set-cookie", line);
      headers.append("set-cookie", serializeCookie(jwt.name, "", jwt.attributes));
      return {
        response: new Response(response.body, {
          status: response.status,
          statusText: response.statusText,
          headers,
        }),
      };
    },
    hooks: {
      before: [
        {
          // Server-only endpoints without a path (api-key's `verifyApiKey`, …) reach the after
          // hooks with `ctx.path` undefined, and hooks call string methods on it (anonymous:
          // `ctx.path.startsWith`). An empty path matches no hook and crashes none.
          matcher: (ctx) => ctx.path === undefined,
          handler: createAuthMiddleware(async () => ({ context: { path: "" } })),
        },
        ...advisories.hooks.before,
        // A TOTP code is accepted once, by any sign-in on any instance (one-time/used-totp.ts).
        usedTotpHook,
      ],
      after: [
        {
          // Every response: a session cookie set means a new session (sign-in, sign-up, OAuth
          // callback, verification, impersonation, two-factor, anonymous, …), one ended means the
          // session is gone.
          matcher: () => true,
          handler: createAuthMiddleware(async (ctx) => {
            const change = cookieChange(
              ctx.context.responseHeaders?.getSetCookie() ?? [],
              ctx.context.authCookies.sessionToken.name,
            );
            if (change === "cleared") {
              const cookie = cookieFor(ctx, 0);
              ctx.setCookie(cookie.name, "", cookie.attributes);
              return;
            }
            const session = (
              change === "set"
                ? ctx.context.newSession
                : ctx.path === REFRESH_PATH
                  ? (ctx.context.newSession ?? ctx.context.session)
                  : undefined
            ) as any;
            if (!session?.session || !session.user || isBanned(session.user)) return;
            if (advisories.withholdsJwt(ctx)) return;
            // get-session leaves an expired (just deleted) or vanished session in ctx.context.session
            // and answers null: no token for it.
            if (ctx.context.returned === null) return;
            if (!(new Date(session.session.expiresAt).getTime() > Date.now())) return;
            const previous = ctx.context.session;
            ctx.context.session = session;
            try {
              await setJwtCookie(ctx);
            } finally {
              ctx.context.session = previous;
            }
          }),
        },
      ],
    },
    options: { basePath, expirationSeconds },
  } satisfies BetterAuthPlugin;
};
