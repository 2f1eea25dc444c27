/**
 * Refusal at start: an auth whose options enable a feature with advisories our layer cannot
 * mitigate on Better Auth 1.4.9 fails to initialise, with one line naming the advisories and the
 * way out, unless every one of them is accepted explicitly. On a Better Auth that fixes them (the
 * newest patched line, docs/security.md) nothing is refused.
 */
import { ACCEPT_ADVISORIES_VAR, type Accepted, ADVISORY, REFUSED_PLUGINS } from "./catalog.ts";

/**
 * The one-line refusal; `advisories` are the ids still to accept.
 *
 * @example
 * ```ts
 * import { AdvisoryRefusal, checkAuthStarts } from "service-auth/auth";
 * import { StartRefusal } from "service-auth/server";
 *
 * try {
 *   await checkAuthStarts(backend, internal.auth.checkOptions);
 * } catch (error) {
 *   // error.advisories: the ids to accept (or upgrade Better Auth).
 *   if (error instanceof AdvisoryRefusal) throw new StartRefusal(`refusing to start: ${error.message}`);
 *   throw error;
 * }
 * ```
 */
export class AdvisoryRefusal extends Error {
  override readonly name = "AdvisoryRefusal";
  constructor(
    message: string,
    readonly advisories: readonly string[],
  ) {
    super(message);
  }
}

/** The pinned line, which reports no version of its own (`ctx.version` is 1.6+). */
export const PINNED_BETTER_AUTH = "1.4.9";

/** True when release `version` comes before `fixedIn` (plain `major.minor.patch` numbers). */
export function predates(version: string, fixedIn: string): boolean {
  const parts = (v: string) => v.split("-")[0].split(".").map(Number);
  const [a, b] = [parts(version), parts(fixedIn)];
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) < (b[i] ?? 0);
  return false;
}

/** The part of Better Auth's options the check reads. */
export interface RefusalOptions {
  plugins?: readonly { id: string }[];
  account?: { storeStateStrategy?: string };
}

const wayOut = (ids: readonly string[]) =>
  `Use a patched Better Auth line, or accept the risk with ${ACCEPT_ADVISORIES_VAR}=${ids.join(",")}`;

/**
 * Throws {@link AdvisoryRefusal} for the first refused feature not fully accepted whose fix
 * `version` (the installed Better Auth's) predates.
 */
export function refuseUnpatchedFeatures(
  options: RefusalOptions,
  accepted: Accepted,
  version: string = PINNED_BETTER_AUTH,
): void {
  const enabled = new Set((options.plugins ?? []).map((p) => p.id));
  for (const refused of REFUSED_PLUGINS) {
    if (!enabled.has(refused.pluginId) || !predates(version, refused.fixedIn)) continue;
    const open = refused.advisories.filter((id) => !accepted.has(id));
    if (open.length === 0) continue;
    throw new AdvisoryRefusal(
      `Service Auth refuses the Better Auth "${refused.pluginId}" plugin on better-auth ${version}: ${open.join(", ")} ${open.length === 1 ? "is" : "are"} unfixed there (fixed in better-auth >= ${refused.fixedIn}). ${wayOut(open)}`,
      open,
    );
  }
  const cookieStateFixedIn = "1.6.2";
  if (
    options.account?.storeStateStrategy === "cookie" &&
    !accepted.has(ADVISORY.cookieOAuthState) &&
    predates(version, cookieStateFixedIn)
  ) {
    const open = [ADVISORY.cookieOAuthState];
    throw new AdvisoryRefusal(
      `Service Auth refuses account.storeStateStrategy "cookie" on better-auth ${version}: ${open[0]} (OAuth state not checked against the cookie) is unfixed there (fixed in better-auth >= ${cookieStateFixedIn}). Keep the default "database" state, use a patched Better Auth line, or accept the risk with ${ACCEPT_ADVISORIES_VAR}=${open[0]}`,
      open,
    );
  }
}
