/**
 * Refused reuse of a used-up API key (issue 45). The api-key plugin refuses a key whose `remaining`
 * uses are 0 (no refill due) in a before-hook of its own (429 `USAGE_EXCEEDED`); a key with no
 * refill is deleted then, so later requests get 401 `INVALID_API_KEY` like a key that never
 * existed. No after-hook sees a refusal in a before-hook, and before-hooks run in plugin order, so
 * the check runs in the audit trail's `onRequest`, which Better Auth calls for every request before
 * any hook: a request whose `x-api-key` the api-key plugin takes (its own hook's matcher says so)
 * and names a used-up key, or a key deleted as used up (its tombstone is there), is recorded as
 * `credential.reused`; the plugin refuses it right after, in the same transaction (the auth
 * middleware runs every request with an API key as one, one-time/routes.ts). A used-up key about
 * to be deleted leaves that tombstone: the SHA-256 of the key's stored hash, holding the user id.
 * Keys with the plugin's default hashing, kept in the database (not secondary storage alone).
 */
import { createHash } from "node:crypto";
import type { BetterAuthPlugin } from "better-auth";
import { API_KEY_HEADER } from "../one-time/routes.ts";
import type { AuditInput } from "./events.ts";
import { tombstoneFor, tombstoneOf } from "./reuse.ts";

/** The context Better Auth gives a plugin's `onRequest` (both lines). */
type AuthContext = Parameters<NonNullable<BetterAuthPlugin["onRequest"]>>[1];

/** The row fields read here (the owner is `userId` on 1.4.9, `referenceId` on 1.7). */
interface KeyRow {
  remaining?: number | null;
  refillAmount?: number | null;
  refillInterval?: number | null;
  lastRefillAt?: Date | number | null;
  createdAt?: Date | number;
  userId?: string;
  referenceId?: string;
}

/** The name a used-up key's tombstone is kept under (only its hash is stored). */
const usedUpKey = (storedHash: string) => `api-key:${storedHash}`;

const timeOf = (value: Date | number | null | undefined) =>
  value instanceof Date ? value.getTime() : Number(value ?? 0);

/** True when the plugin refuses `row` for its uses (none left, no refill due now). */
function usedUp(row: KeyRow, now = Date.now()): boolean {
  if (row.remaining !== 0) return false;
  const { refillAmount, refillInterval } = row;
  const refillDue =
    !!refillAmount && !!refillInterval && now - timeOf(row.lastRefillAt ?? row.createdAt) > refillInterval;
  return !refillDue;
}

/** The route below the auth base path, for the event's `method`. */
function routeOf(request: Request, context: AuthContext): string {
  const path = new URL(request.url).pathname;
  const base = context.options.basePath ?? "/api/auth";
  return path.startsWith(base) ? path.slice(base.length) || "/" : path;
}

/**
 * The audit trail's `onRequest` part: records a request presenting a used-up API key (see above).
 * `record` writes one event; answers nothing, so Better Auth goes on with the request.
 */
export async function recordUsedUpKey(
  request: Request,
  context: AuthContext,
  record: (ctx: any, input: AuditInput) => Promise<void>,
): Promise<void> {
  const key = request.headers.get(API_KEY_HEADER);
  if (!key) return;
  const plugin = context.options.plugins?.find((p) => p.id === "api-key");
  const path = routeOf(request, context);
  const facts = { path, headers: request.headers, request };
  // The plugin's own hook decides whether it takes the key (sessions for API keys on).
  if (!plugin?.hooks?.before?.some((hook) => hook.matcher(facts as any))) return;
  const storedHash = createHash("sha256").update(key).digest("base64url");
  const row = await context.adapter.findOne<KeyRow>({
    model: "apikey",
    where: [{ field: "key", value: storedHash }],
  });
  let userId: string | undefined;
  if (row) {
    if (!usedUp(row)) return;
    userId = row.userId ?? row.referenceId;
    const tombstone = tombstoneOf(usedUpKey(storedHash));
    // Deleted by the plugin on this request: remembered, so later uses are recognised too.
    if (
      row.refillAmount == null &&
      userId &&
      !(await context.internalAdapter.findVerificationValue(tombstone))
    )
      await context.internalAdapter.createVerificationValue(tombstoneFor(usedUpKey(storedHash), userId));
  } else {
    const tombstone = await context.internalAdapter.findVerificationValue(tombstoneOf(usedUpKey(storedHash)));
    if (!tombstone) return;
    userId = tombstone.value;
  }
  await record(
    { ...facts, context: { adapter: context.adapter } },
    {
      type: "credential.reused",
      actorId: null,
      targetId: userId ?? null,
      details: { method: path, reason: "USAGE_EXCEEDED" },
    },
  );
}
