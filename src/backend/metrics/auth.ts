/**
 * Authentication: token checks (steps 1+2) and the auth routes' outcomes by reason, identity cache
 * hits and misses, catch-ups for unknown signing keys. Reasons are fixed lists; no user id, token
 * or email is ever a label.
 */
import { Counter } from "prom-client";
import { AppError } from "../errors.ts";
import { type CounterSeries, PlainCounter } from "./plain-series.ts";
import { metricsRegistry } from "./registry.ts";

/**
 * Why a token check (HTTP, WebSocket, actions) ended as it did: `ok`, a step 1 refusal
 * (`signature_invalid`, `unknown_key`, `token_expired`, `token_malformed`, `token_claims` for
 * issuer/audience/algorithm/time claims, `no_keys` when no key set could be read), a step 2 refusal
 * (`session_missing`, `session_expired`, `user_missing`, `banned`, `unauthorized` for any other),
 * `unavailable` (database outage) or `error`.
 */
export type TokenOutcome =
  | "ok"
  | "signature_invalid"
  | "unknown_key"
  | "token_expired"
  | "token_malformed"
  | "token_claims"
  | "no_keys"
  | "session_missing"
  | "session_expired"
  | "user_missing"
  | "banned"
  | "unauthorized"
  | "unavailable"
  | "error";

/**
 * Outcomes the auth integration reports from its own routes: a sign-in `ok`, refused for wrong
 * credentials (`invalid_credentials`), for a ban (`banned`), by the rate limiter (`rate_limited`,
 * any auth route), or `error` (anything else).
 *
 * @example
 * ```ts
 * import { type AuthRouteOutcome, countAuthOutcome } from "service-auth/server";
 *
 * const outcome: AuthRouteOutcome = response.status === 429 ? "rate_limited" : response.ok ? "ok" : "error";
 * countAuthOutcome("auth_route", outcome);
 * ```
 */
export type AuthRouteOutcome = "ok" | "invalid_credentials" | "banned" | "rate_limited" | "error";

/** Where an auth outcome was decided. */
export type AuthCheck = "token" | "sign_in" | "auth_route";

// Counted per request: plain numbers (plain-series.ts).
const authOutcomes = new PlainCounter(
  "service_auth_auth_outcomes_total",
  "Authentication outcomes: token checks (steps 1+2) and the auth routes' sign-ins and rate limits, by reason",
  metricsRegistry,
);

const identityCache = new PlainCounter(
  "service_auth_identity_cache_total",
  "Identity cache lookups of token checks, by result (hit: steps 1+2 skipped)",
  metricsRegistry,
);

const keyCatchUps = new Counter({
  name: "service_auth_key_catch_ups_total",
  help: "Catch-ups with other instances' commits for tokens whose signing key was unknown here (a key rotated elsewhere); at most one per interval",
  registers: [metricsRegistry],
});

const authSeries = new Map<string, CounterSeries>();

/**
 * Counts one auth outcome (see {@link TokenOutcome} and {@link AuthRouteOutcome}).
 *
 * @example
 * ```ts
 * import { countAuthOutcome } from "service-auth/server";
 *
 * // Counted in service_auth_auth_outcomes_total{check="sign_in",outcome="invalid_credentials"}.
 * countAuthOutcome("sign_in", "invalid_credentials");
 * ```
 */
export function countAuthOutcome(check: "token", outcome: TokenOutcome): void;
export function countAuthOutcome(check: "sign_in" | "auth_route", outcome: AuthRouteOutcome): void;
export function countAuthOutcome(check: AuthCheck, outcome: TokenOutcome | AuthRouteOutcome): void {
  const key = `${check}:${outcome}`;
  let series = authSeries.get(key);
  if (!series) authSeries.set(key, (series = authOutcomes.series({ check, outcome })));
  series.inc();
}

const tokenOk = authOutcomes.series({ check: "token", outcome: "ok" });
authSeries.set("token:ok", tokenOk);
const cacheHit = identityCache.series({ result: "hit" });
const cacheMiss = identityCache.series({ result: "miss" });

/** Hot-path counters of the authenticator, pre-bound. */
export const authMetrics = {
  tokenAccepted(): void {
    tokenOk.inc();
  },
  cacheHit(): void {
    cacheHit.inc();
  },
  cacheMiss(): void {
    cacheMiss.inc();
  },
  keyCatchUp(): void {
    keyCatchUps.inc();
  },
};

/** Step 1 refusal codes (`TokenErrorCode`) → outcome. */
const TOKEN_REASONS: Record<string, TokenOutcome> = {
  INVALID_SIGNATURE: "signature_invalid",
  UNKNOWN_KEY: "unknown_key",
  TOKEN_EXPIRED: "token_expired",
  TOKEN_MALFORMED: "token_malformed",
  TOKEN_TOO_LARGE: "token_malformed",
  ALG_NOT_ALLOWED: "token_claims",
  CLAIM_INVALID: "token_claims",
  NO_KEYS: "no_keys",
};

/** Step 2 refusal reasons an identity resolver names in `data.reason` → outcome. */
const RESOLVER_REASONS: Record<string, TokenOutcome> = {
  SESSION_MISSING: "session_missing",
  SESSION_EXPIRED: "session_expired",
  USER_MISSING: "user_missing",
};

/** Why a token check failed, from what it threw. */
export function tokenOutcomeOf(error: unknown): TokenOutcome {
  if (!(error instanceof AppError)) return "error";
  if (error.code === "ACCOUNT_BANNED") return "banned";
  if (error.code === "DATABASE_UNAVAILABLE" || error.code === "DATABASE_BUSY") return "unavailable";
  if (error.code !== "UNAUTHORIZED") return "error";
  const reason = (error.data as { reason?: unknown } | undefined)?.reason;
  if (typeof reason !== "string") return "unauthorized";
  return TOKEN_REASONS[reason] ?? RESOLVER_REASONS[reason] ?? "unauthorized";
}
