/**
 * The published advisories that reach the pinned Better Auth 1.4.9 and that our layer acts on,
 * by id, plus the setting that accepts a risk. docs/security.md is the reader's view of the same
 * list; keep the two in step.
 */

/** Ids of the advisories our layer mitigates or refuses (the upstream GHSA / CVE ids). */
export const ADVISORY = {
  /** IPv6 rate-limit keys per address instead of per /64. */
  ipv6RateLimit: "GHSA-p6v2-xcpg-h6xw",
  /** Sessions outlive a user deleted by admin remove-user or anonymous link/delete. */
  sessionsAfterUserDelete: "GHSA-2vg6-77g8-24mp",
  /** Organization invitations usable by an unverified email. */
  unverifiedInvitation: "GHSA-fmh4-wcc4-5jm3",
  /** OAuth sign-in links implicitly into an unverified local account. */
  implicitOAuthLinking: "GHSA-g38m-r43w-p2q7",
  /** Pre-account hijacking through magic link / email OTP. */
  preAccountHijacking: "GHSA-qq9h-g4jm-xgf3",
  /** OAuth state in a cookie is not compared with the callback's `state`. */
  cookieOAuthState: "GHSA-wxw3-q3m9-c3jr",
  /** Magic-link verify accepts any verification row (an OAuth state) as a token. */
  magicLinkForeignToken: "CVE-2026-110862",
  /** A backend JWT minted before the second factor of a two-factor sign-in. */
  jwtBeforeSecondFactor: "GHSA-4qvm-r4pr-v3wg",
} as const;

export type AdvisoryId = (typeof ADVISORY)[keyof typeof ADVISORY];

/** A Better Auth plugin whose advisories cannot be mitigated in our layer on 1.4.9. */
export interface RefusedPlugin {
  /** The plugin's `id` as Better Auth registers it. */
  pluginId: string;
  advisories: readonly string[];
  /** The first Better Auth release fixing all of them. */
  fixedIn: string;
}

const OIDC_ADVISORIES = [
  "GHSA-pw9m-5jxm-xr6h",
  "GHSA-9h47-pqcx-hjr4",
  "GHSA-86j7-9j95-vpqj",
  "GHSA-7w99-5wm4-3g79",
] as const;

export const REFUSED_PLUGINS: readonly RefusedPlugin[] = [
  { pluginId: "oidc", advisories: OIDC_ADVISORIES, fixedIn: "1.6.13" },
  { pluginId: "mcp", advisories: OIDC_ADVISORIES, fixedIn: "1.6.13" },
  { pluginId: "device-authorization", advisories: ["CVE-2026-109346"], fixedIn: "1.6.11" },
];

/** The variable (and `backend` plugin option `acceptAdvisories`) listing accepted advisory ids. */
export const ACCEPT_ADVISORIES_VAR = "SERVICE_AUTH_ACCEPT_ADVISORIES";

/** What `acceptAdvisories` takes: a comma-separated list (the variable's value) or an array. */
export type AcceptedAdvisories = string | readonly string[] | undefined;

/** Advisory ids compare trimmed and case-insensitively (`ghsa-…` and `GHSA-…` are one id). */
const normalId = (id: string) => id.trim().toLowerCase();

/** The accepted advisories of an `acceptAdvisories` value. */
export interface Accepted {
  has(id: string): boolean;
}

export function acceptedAdvisories(value: AcceptedAdvisories): Accepted {
  const items = typeof value === "string" ? value.split(",") : (value ?? []);
  const ids = new Set(items.map(normalId).filter((id) => id.length > 0));
  return { has: (id) => ids.has(normalId(id)) };
}
