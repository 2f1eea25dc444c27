/**
 * JWT claims (requirements §2.6): by default every user field except `id` and `image`, plus `sessionId`
 * and `iat`; both are added even when a custom `definePayload` leaves them out. Dates become
 * numbers (ms since epoch), the unit of every timestamp in our tables.
 */

/**
 * What a token's claims are made from: the user and the session it is issued for, as Better
 * Auth's `jwt` plugin hands them to `definePayload`.
 *
 * @example
 * ```ts
 * import { defaultPayload, type PayloadInput } from "service-auth/auth";
 *
 * // Claims of a backend token: the default ones plus the session's active organization.
 * const definePayload = (input: PayloadInput) => ({
 *   ...defaultPayload(input),
 *   activeOrganizationId: input.session.activeOrganizationId ?? null,
 * });
 * ```
 */
export interface PayloadInput {
  user: Record<string, unknown> & { id: string };
  session: Record<string, unknown> & { id: string };
}

/**
 * Makes the claims of a backend token from the user and session it is issued for
 * (`jwt.definePayload` of the {@link backend} plugin); `sessionId` and `iat` are added when absent.
 *
 * @example
 * ```ts
 * import { backend, type DefinePayload } from "service-auth/auth";
 *
 * // Only the user's email and role in the token.
 * const definePayload: DefinePayload = ({ user }) => ({ email: user.email, role: user.role ?? null });
 * const plugin = backend({ authConfig: authConfig(env), jwks: env.get("JWKS"), jwt: { definePayload } });
 * ```
 */
export type DefinePayload = (
  input: PayloadInput,
) => Record<string, unknown> | Promise<Record<string, unknown>>;

function plain(value: unknown): unknown {
  return value instanceof Date ? value.getTime() : value;
}

/**
 * The default payload: all user fields except `id` and `image`.
 *
 * @example
 * ```ts
 * import { backend, defaultPayload } from "service-auth/auth";
 *
 * // The default claims plus one of the app's own.
 * const plugin = backend({
 *   authConfig: authConfig(env),
 *   jwt: { definePayload: (input) => ({ ...defaultPayload(input), plan: "free" }) },
 * });
 * ```
 */
export function defaultPayload({ user }: PayloadInput): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(user)) {
    if (k === "id" || k === "image" || v === undefined) continue;
    out[k] = plain(v);
  }
  return out;
}

/** Wraps `definePayload` so `sessionId` and `iat` are always present. */
export function payloadWithRequiredClaims(definePayload: DefinePayload = defaultPayload): DefinePayload {
  return async (input) => {
    const custom = await definePayload(input);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(custom ?? {})) out[k] = plain(v);
    out.sessionId = input.session.id;
    if (typeof out.iat !== "number") out.iat = Math.floor(Date.now() / 1000);
    return out;
  };
}
