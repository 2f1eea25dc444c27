/**
 * The origins browsers may call the backend from: `SITE_URL`'s origin, then every origin listed in
 * `TRUSTED_ORIGINS` (comma-separated; e.g. a dashboard and a marketing site on one backend). The
 * cross-origin rule answers each listed origin with itself and nothing else (never `*`), and Better
 * Auth's origin check (CSRF) takes the same list, so both always agree. Tokens stay issued by
 * `SITE_URL` alone (`iss`), whichever site asked for them.
 *
 * An entry is an origin (`https://app.example.com`, `http://localhost:5173`) or one wildcard
 * sub-domain pattern (`https://*.example.com`: any sub-domain, that scheme only), the form Better
 * Auth's `trustedOrigins` accepts too. Anything else refuses the start.
 */
import { type EnvReader, type SettingProblem, settingProblem } from "service-auth/server";
import { siteUrlOf } from "./provider-config.ts";

/**
 * The variable listing the other origins allowed besides `SITE_URL`'s.
 *
 * @example
 * ```ts
 * import { TRUSTED_ORIGINS_VAR } from "service-auth/auth";
 *
 * // e.g. TRUSTED_ORIGINS=https://dashboard.example.com,https://*.example.com
 * const listed = (env.get(TRUSTED_ORIGINS_VAR) ?? "").split(",").filter(Boolean);
 * ```
 */
export const TRUSTED_ORIGINS_VAR = "TRUSTED_ORIGINS";

/** One parsed entry: an exact origin, or a scheme plus a host suffix (`*.example.com`). */
type OriginEntry = { exact: string } | { scheme: string; suffix: string };

/** Parses one `TRUSTED_ORIGINS` entry, or says why it is not an origin. */
function parseEntry(raw: string): OriginEntry | string {
  const wildcard = /^(https?):\/\/\*\.([^*/?#]+)$/i.exec(raw);
  if (wildcard) {
    let host: URL;
    try {
      host = new URL(`${wildcard[1]}://${wildcard[2]}`);
    } catch {
      return "is not an origin";
    }
    if (!host.hostname.includes(".")) return "matches every sub-domain of a top-level name";
    return { scheme: `${host.protocol}//`, suffix: `.${host.host}` };
  }
  if (raw.includes("*")) return "has a wildcard other than one leading `*.` sub-domain";
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "is not an origin";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "is not an http(s) origin";
  if (url.pathname !== "/" || url.search || url.hash || url.username || url.password)
    return "has more than scheme, host and port";
  return { exact: url.origin };
}

function entriesOf(env: EnvReader): string[] {
  return (env.get(TRUSTED_ORIGINS_VAR) ?? "")
    .split(",")
    .map((s) => s.trim().replace(/\/+$/, ""))
    .filter(Boolean);
}

/**
 * Every origin allowed to call the backend, `SITE_URL`'s first, as Better Auth's
 * `trustedOrigins` takes them (wildcard patterns included). Invalid entries are left out (the
 * start refuses them: {@link originSettingsProblems}).
 *
 * @example
 * betterAuth({ baseURL: siteUrlOf(env), trustedOrigins: trustedOriginsOf(env), ... })
 */
export function trustedOriginsOf(env: EnvReader): string[] {
  const origins = [new URL(siteUrlOf(env)).origin];
  for (const raw of entriesOf(env)) {
    const entry = parseEntry(raw);
    if (typeof entry === "string") continue;
    const origin = "exact" in entry ? entry.exact : `${entry.scheme}*${entry.suffix}`;
    if (!origins.includes(origin)) origins.push(origin);
  }
  return origins;
}

/**
 * Problems of `SITE_URL` and `TRUSTED_ORIGINS`, for the start's settings check.
 *
 * @example
 * ```ts
 * import { originSettingsProblems } from "service-auth/auth";
 *
 * // main.ts `prepare`: a malformed SITE_URL or TRUSTED_ORIGINS entry stops the start.
 * check.add(...originSettingsProblems(backend.env));
 * check.refuseIfAny();
 * ```
 */
export function originSettingsProblems(env: EnvReader): SettingProblem[] {
  const problems: SettingProblem[] = [];
  const site = env.get("SITE_URL");
  if (site !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(site);
    } catch {}
    if (!url || (url.protocol !== "http:" && url.protocol !== "https:"))
      problems.push(
        settingProblem("SITE_URL", site, "is not an http(s) URL", "set SITE_URL=https://your-site.example"),
      );
  }
  for (const raw of entriesOf(env)) {
    const entry = parseEntry(raw);
    if (typeof entry === "string")
      problems.push(
        settingProblem(
          TRUSTED_ORIGINS_VAR,
          env.get(TRUSTED_ORIGINS_VAR),
          `entry "${raw}" ${entry}`,
          "list origins separated by commas, e.g. TRUSTED_ORIGINS=https://app.example.com,https://*.example.com",
        ),
      );
  }
  return problems;
}

/**
 * A matcher answering a request's `Origin` with itself when it is allowed, else null: exact
 * origins by set lookup, patterns by scheme and host suffix.
 */
export function originMatcher(origins: readonly string[]): (origin: string) => string | null {
  const exact = new Set<string>();
  const patterns: { scheme: string; suffix: string }[] = [];
  for (const origin of origins) {
    const entry = parseEntry(origin);
    if (typeof entry === "string") continue;
    if ("exact" in entry) exact.add(entry.exact);
    else patterns.push(entry);
  }
  return (origin) => {
    if (exact.has(origin)) return origin;
    for (const { scheme, suffix } of patterns) {
      if (!origin.startsWith(scheme) || !origin.endsWith(suffix)) continue;
      // The sub-domain is at least one label of its own (not empty, no path or user part).
      const label = origin.slice(scheme.length, origin.length - suffix.length);
      if (/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(label)) return origin;
    }
    return null;
  };
}
