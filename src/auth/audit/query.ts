/**
 * Reading and pruning the audit trail with `ctx.db`: newest first, filtered by user (id or
 * email, as actor or target), event type and time, through the table's indexes. Used by the admin
 * console's live query, the CLI's internal query and the retention sweep.
 */
import { AppError } from "service-auth/server";
import { AUDIT_MODEL, isAuditEventType } from "./events.ts";

/** Largest number of events one read returns. */
export const MAX_AUDIT_PAGE = 1000;
const DEFAULT_AUDIT_PAGE = 100;
/** Longest `user` filter text. */
const MAX_USER_FILTER = 254;

/**
 * Which audit events to read (the admin console's `admin:audit` and the CLI's `audit:list`): by
 * user, type and time, newest first.
 *
 * @example
 * ```ts
 * import type { AuditFilter } from "service-auth/app";
 *
 * // Failed sign-ins for one address in the last day.
 * const filter: AuditFilter = {
 *   user: "ada@example.com",
 *   type: "sign-in.failed",
 *   since: Date.now() - 24 * 60 * 60 * 1000,
 *   limit: 50,
 * };
 * ```
 */
export interface AuditFilter {
  /** A user id or email: events where they acted or were the target. */
  user?: string;
  /** One event type (`sign-in.failed`, …). */
  type?: string;
  /** Events at or after this time (ms since epoch). */
  since?: number;
  /** Events before this time (ms since epoch). */
  until?: number;
  /** At most this many (default 100, at most {@link MAX_AUDIT_PAGE}). */
  limit?: number;
}

/**
 * One event as the console and the CLI show it.
 *
 * @example
 * ```ts
 * import type { AuditEventView } from "service-auth/app";
 *
 * function describe(event: AuditEventView): string {
 *   const who = event.actorEmail ?? event.actorId ?? "someone";
 *   return `${new Date(event.time).toISOString()} ${event.type} by ${who}`;
 * }
 * ```
 */
export interface AuditEventView {
  _id: string;
  type: string;
  time: number;
  actorId: string | null;
  targetId: string | null;
  email: string | null;
  /** The actor's and target's current emails, when they are users that still exist. */
  actorEmail: string | null;
  targetEmail: string | null;
  ipAddress: string | null;
  userAgent: string | null;
  details: Record<string, unknown>;
}

type Db = { query(table: string): any; get(table: string, id: any): Promise<any> };

function parseDetails(text: unknown): Record<string, unknown> {
  try {
    const value = JSON.parse(String(text));
    return value && typeof value === "object" && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}

export function viewOf(row: Record<string, any>): AuditEventView {
  return {
    _id: row._id,
    type: row.type,
    time: row.time,
    actorId: row.actorId ?? null,
    targetId: row.targetId ?? null,
    email: row.email ?? null,
    actorEmail: null,
    targetEmail: null,
    ipAddress: row.ipAddress ?? null,
    userAgent: row.userAgent ?? null,
    details: parseDetails(row.details),
  };
}

/** Checks a filter's values: a clear `BAD_REQUEST` for anything out of bounds. */
export function checkAuditFilter(filter: AuditFilter): Required<Pick<AuditFilter, "limit">> & AuditFilter {
  if (filter.type !== undefined && filter.type !== "" && !isAuditEventType(filter.type))
    throw new AppError("BAD_REQUEST", `Unknown audit event type "${String(filter.type).slice(0, 64)}"`);
  if (filter.user !== undefined && filter.user.length > MAX_USER_FILTER)
    throw new AppError("BAD_REQUEST", `The user filter has at most ${MAX_USER_FILTER} characters`);
  for (const key of ["since", "until"] as const) {
    const value = filter[key];
    if (value !== undefined && !Number.isFinite(value))
      throw new AppError("BAD_REQUEST", `${key} must be a time in ms since epoch`);
  }
  const limit = Math.min(MAX_AUDIT_PAGE, Math.max(1, Math.floor(filter.limit ?? DEFAULT_AUDIT_PAGE)));
  return { ...filter, user: filter.user?.trim() || undefined, type: filter.type || undefined, limit };
}

/** The events matching `filter`, newest first. */
export async function findAuditEvents(db: Db, input: AuditFilter): Promise<AuditEventView[]> {
  const filter = checkAuditFilter(input);
  const { since, until, type, limit } = filter;
  const keep = (e: any) =>
    (since === undefined || e.time >= since) &&
    (until === undefined || e.time < until) &&
    (type === undefined || e.type === type);
  const scans: Promise<any[]>[] = [];
  const byIndex = (index: string, value: string) =>
    db
      .query(AUDIT_MODEL)
      .withIndex(index, (q: any) => q.eq(index, value))
      .order("desc")
      .filter(keep)
      .take(limit);
  if (filter.user) {
    const user = filter.user;
    const email = user.includes("@") ? user.toLowerCase() : undefined;
    const ids = new Set<string>();
    if (email) {
      const found = await db
        .query("user")
        .withIndex("email", (q: any) => q.eq("email", email))
        .first();
      if (found) ids.add(found._id);
      scans.push(byIndex("email", email));
    } else ids.add(user);
    for (const id of ids) scans.push(byIndex("actorId", id), byIndex("targetId", id));
  } else if (type) {
    scans.push(byIndex("type", type));
  } else {
    scans.push(
      db
        .query(AUDIT_MODEL)
        .withIndex("time", (q: any) => (since === undefined ? q : q.gte("time", since)))
        .order("desc")
        .filter(keep)
        .take(limit),
    );
  }
  const seen = new Map<string, any>();
  for (const rows of await Promise.all(scans)) for (const row of rows) seen.set(row._id, row);
  const views = [...seen.values()]
    .sort((a, b) => b.time - a.time || b._creationTime - a._creationTime)
    .slice(0, limit)
    .map(viewOf);
  // Names people read: the emails of the users involved (one read per distinct user).
  const emails = new Map<string, Promise<string | null>>();
  const emailOf = (id: string | null) => {
    if (!id) return Promise.resolve(null);
    let found = emails.get(id);
    if (!found) {
      found = db.get("user", id).then(
        (u: any) => (typeof u?.email === "string" ? u.email : null),
        () => null,
      );
      emails.set(id, found);
    }
    return found;
  };
  await Promise.all(
    views.map(async (view) => {
      view.actorEmail = await emailOf(view.actorId);
      view.targetEmail = await emailOf(view.targetId);
    }),
  );
  return views;
}

/** Deletes up to `batch` events older than `cutoff`; returns how many it deleted. */
export async function pruneAuditEvents(
  db: Db & { delete(id: any): Promise<void> },
  cutoff: number,
  batch: number,
): Promise<number> {
  const old = await db
    .query(AUDIT_MODEL)
    .withIndex("time", (q: any) => q.lt("time", cutoff))
    .take(batch);
  for (const row of old) await db.delete(row._id);
  return old.length;
}
