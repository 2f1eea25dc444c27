/**
 * The audit trail's vocabulary and limits: the event types, the stored fields' length limits and
 * the one function that turns what a hook knows into a bounded row. Nothing here may ever carry
 * a password, session token, JWT or secret: callers pass named facts only, never request bodies.
 */

/**
 * Every kind of event the audit trail records.
 *
 * @example
 * ```ts
 * import { AUDIT_EVENT_TYPES, type AuditEventType } from "service-auth/app";
 *
 * function isEventType(text: string): text is AuditEventType {
 *   return (AUDIT_EVENT_TYPES as readonly string[]).includes(text);
 * }
 * ```
 */
export const AUDIT_EVENT_TYPES = [
  "sign-up",
  "sign-in",
  "sign-in.failed",
  "sign-out",
  "session.revoked",
  "user.banned",
  "user.unbanned",
  "role.changed",
  "impersonation.started",
  "impersonation.stopped",
  "password.changed",
  "password.reset",
  "second-factor.enabled",
  "second-factor.disabled",
  "keys.rotated",
  "env.changed",
  "credential.reused",
] as const;

/**
 * The type of an audit event: one of {@link AUDIT_EVENT_TYPES}, such as `sign-in.failed` or `role.changed`.
 *
 * @example
 * ```ts
 * import type { AuditEventType } from "service-auth/app";
 *
 * const watched: AuditEventType[] = ["sign-in.failed", "role.changed", "keys.rotated"];
 * ```
 */
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

/** The Better Auth model (and table) name of the audit trail. */
export const AUDIT_MODEL = "auditEvent";

/** Longest stored value of each field, in characters; `details` is JSON of at most this length. */
export const AUDIT_FIELD_LIMITS = Object.freeze({
  type: 64,
  actorId: 64,
  targetId: 64,
  email: 254,
  ipAddress: 64,
  userAgent: 512,
  details: 1000,
  /** Each string inside `details`. */
  detail: 200,
});

/**
 * What a caller knows about an event; everything is optional but its type.
 *
 * @example
 * ```ts
 * import { type AuditInput, recordAuditEvent } from "service-auth/app";
 *
 * // In a mutation, after the app changed a user's role itself:
 * const event: AuditInput = {
 *   type: "role.changed",
 *   targetId: user._id,
 *   email: user.email,
 *   details: { role, source: "cli" },
 * };
 * await recordAuditEvent(ctx.db, event);
 * ```
 */
export interface AuditInput {
  type: AuditEventType;
  /** Who did it (a user id), when known. */
  actorId?: string | null;
  /** Whom it concerns (a user id), when known. */
  targetId?: string | null;
  /** The target's email (or the one a failed sign-in tried). */
  email?: string | null;
  ipAddress?: string | null;
  userAgent?: string | null;
  /** Small named facts (reason, role, method, …): strings, numbers, booleans, null, string lists. */
  details?: Record<string, unknown>;
  /** Event time, ms since epoch (default now). */
  time?: number;
}

/** One stored audit event (without the system fields). */
export interface AuditRow {
  type: AuditEventType;
  time: number;
  actorId?: string;
  targetId?: string;
  email?: string;
  ipAddress?: string;
  userAgent?: string;
  /** JSON object, at most `AUDIT_FIELD_LIMITS.details` characters. */
  details: string;
}

function clip(value: unknown, max: number): string | undefined {
  if (value === null || value === undefined || value === "") return undefined;
  const text = String(value);
  return text.length > max ? text.slice(0, max) : text;
}

function boundedDetail(value: unknown): unknown {
  if (value === null || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (value instanceof Date) return value.getTime();
  if (Array.isArray(value)) return value.slice(0, 20).map((v) => clip(v, AUDIT_FIELD_LIMITS.detail) ?? null);
  // No structures: nothing shaped like a request body can be stored through details.
  if (typeof value === "object") return null;
  return clip(value, AUDIT_FIELD_LIMITS.detail) ?? null;
}

/** `details` as JSON within the limit: keys are dropped from the end until it fits. */
export function boundedDetails(details: Record<string, unknown> | undefined): string {
  const entries = Object.entries(details ?? {})
    .filter(([, value]) => value !== undefined)
    .slice(0, 20)
    .map(([key, value]) => [key.slice(0, 40), boundedDetail(value)] as const);
  while (entries.length > 0) {
    const json = JSON.stringify(Object.fromEntries(entries));
    if (json.length <= AUDIT_FIELD_LIMITS.details) return json;
    entries.pop();
  }
  return "{}";
}

/** The stored row for `input`: every field length-limited, absent fields left out. */
export function auditRow(input: AuditInput): AuditRow {
  const row: AuditRow = {
    type: input.type,
    time: input.time ?? Date.now(),
    details: boundedDetails(input.details),
  };
  const optional = {
    actorId: clip(input.actorId, AUDIT_FIELD_LIMITS.actorId),
    targetId: clip(input.targetId, AUDIT_FIELD_LIMITS.targetId),
    email: clip(input.email?.toLowerCase(), AUDIT_FIELD_LIMITS.email),
    ipAddress: clip(input.ipAddress, AUDIT_FIELD_LIMITS.ipAddress),
    userAgent: clip(input.userAgent, AUDIT_FIELD_LIMITS.userAgent),
  };
  for (const [key, value] of Object.entries(optional)) if (value !== undefined) (row as any)[key] = value;
  return row;
}

/** True for a known event type (filters and the record function accept nothing else). */
export function isAuditEventType(value: unknown): value is AuditEventType {
  return typeof value === "string" && (AUDIT_EVENT_TYPES as readonly string[]).includes(value);
}
