/**
 * JWT claims (requirements §2.6): by default every user field except `id` and `image`, plus `sessionId`
 * and `iat`; both are added even when a custom `definePayload` leaves them out. Dates become
 * numbers (ms since epoch), the unit of every timestamp in our tables.
 */

export interface PayloadInput {
  user: Record<string, unknown> & { id: string };
  session: Record<string, unknown> & { id: string };
}

export type DefinePayload = (
  input: PayloadInput,
) => Record<string, unknown> | Promise<Record<string, unknown>>;

function plain(value: unknown): unknown {
  return value instanceof Date ? value.getTime() : value;
}

/** The default payload: all user fields except `id` and `image`. */
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
