/**
 * `ctx.connections`: the live WebSocket connections of every instance (the `_connections` rows
 * presence keeps, sync/presence.ts) as a query reads them — with the query's read set, so a
 * live query listing them updates as connections come and go — and, in a mutation, a request
 * that closes them on every instance (a `_disconnects` row each instance hears).
 */
import { AppError } from "../errors.ts";
import type { DatabaseReaderImpl, DatabaseWriterImpl } from "./database.ts";

/**
 * One live WebSocket connection, on any instance.
 *
 * @example
 * ```ts
 * import type { LiveConnection } from "service-auth/server";
 *
 * function label(connection: LiveConnection): string {
 *   return `${connection.subject} from ${connection.clientIp ?? "?"} (${connection.subscriptions} live queries)`;
 * }
 * ```
 */
export interface LiveConnection {
  /** The presence row's id. */
  _id: string;
  /** The instance (server process) holding the socket. */
  instanceId: string;
  /** When the socket was opened, ms since epoch. */
  openedAt: number;
  /** The identity's `subject` (the user id with the auth integration). */
  subject: string;
  /** The token's `sessionId` claim, when it has one. */
  sessionId: string | null;
  clientIp: string | null;
  userAgent: string | null;
  /** Live queries the connection holds. */
  subscriptions: number;
}

/**
 * Which connections: those of one session, or of one subject (every session of a user).
 *
 * @example
 * ```ts
 * import type { ConnectionFilter } from "service-auth/server";
 *
 * const oneSession: ConnectionFilter = { sessionId: "session-id" };
 * const everySessionOfUser: ConnectionFilter = { subject: "user-id" };
 * ```
 */
export type ConnectionFilter =
  | { sessionId: string; subject?: undefined }
  | { subject: string; sessionId?: undefined };

/**
 * `ctx.connections` in a query.
 *
 * @example
 * ```ts
 * export const myConnections = query({
 *   args: {},
 *   handler: async (ctx) => {
 *     const identity = await ctx.auth.getUserIdentity();
 *     if (!identity) throw new AppError("UNAUTHORIZED", "Sign in first");
 *     return ctx.connections.list({ subject: identity.subject });
 *   },
 * });
 * ```
 */
export interface ConnectionsReader {
  /** The identified live connections matching `filter`, oldest first. */
  list(filter: ConnectionFilter): Promise<LiveConnection[]>;
}

/**
 * `ctx.connections` in a mutation.
 *
 * @example
 * ```ts
 * export const kickUser = internalMutation({
 *   args: { userId: v.string() },
 *   handler: async (ctx, { userId }) => {
 *     // Closes every live WebSocket of the user, on every instance, once this mutation commits.
 *     await ctx.connections.disconnect({ subject: userId });
 *   },
 * });
 * ```
 */
export interface ConnectionsWriter extends ConnectionsReader {
  /**
   * Closes the matching connections on every instance once this mutation commits (close code
   * 4010; clients reconnect, and a still valid session is accepted again).
   */
  disconnect(filter: ConnectionFilter): Promise<void>;
}

const MAX_KEY = 512;

function checked(filter: ConnectionFilter): ["sessionId" | "subject", string] {
  const entries = Object.entries(filter ?? {}).filter(([, v]) => v !== undefined);
  const [key, value] = entries[0] ?? [];
  if (entries.length !== 1 || (key !== "sessionId" && key !== "subject"))
    throw new AppError("BAD_REQUEST", "Name exactly one of sessionId or subject");
  if (typeof value !== "string" || value === "" || value.length > MAX_KEY)
    throw new AppError("BAD_REQUEST", `${key} must be a non-empty string of at most ${MAX_KEY} characters`);
  return [key, value];
}

const orNull = <T>(value: T | undefined): T | null => (value === undefined ? null : value);

export function connectionsReader(system: DatabaseReaderImpl): ConnectionsReader {
  return {
    async list(filter) {
      const [key, value] = checked(filter);
      const rows = await system
        .query("_connections")
        .withIndex(key, (q: any) => q.eq(key, value))
        .collect();
      return rows
        .map((r: any) => ({
          _id: r._id,
          instanceId: r.instanceId,
          openedAt: r.openedAt,
          subject: r.subject,
          sessionId: orNull(r.sessionId),
          clientIp: orNull(r.clientIp),
          userAgent: orNull(r.userAgent),
          subscriptions: r.subscriptions,
        }))
        .sort((a: LiveConnection, b: LiveConnection) => a.openedAt - b.openedAt);
    },
  };
}

export function connectionsWriter(system: DatabaseWriterImpl): ConnectionsWriter {
  return {
    ...connectionsReader(system),
    async disconnect(filter) {
      const [key, value] = checked(filter);
      await system.insert("_disconnects", { [key]: value, requestedAt: Date.now() });
    },
  };
}
