/**
 * The fields of requirements §2.1–2.5's auth tables (validators), shared by the table definitions
 * (schema.ts) and their static types (schema/table-types.ts).
 */
import { v } from "service-auth/values";

/**
 * Names of the auth tables (Better Auth's default model names).
 *
 * @example
 * ```ts
 * import { AUTH_TABLE_NAMES } from "service-auth/auth";
 *
 * // The app's own tables: those of the schema that are not auth tables.
 * const authNames: readonly string[] = AUTH_TABLE_NAMES;
 * const appTables = Object.keys(schema.tables).filter((name) => !authNames.includes(name));
 * ```
 */
export const AUTH_TABLE_NAMES = ["user", "session", "account", "verification", "jwks"] as const;
/**
 * The name of one of the requirements §2 auth tables: `user`, `session`, `account`,
 * `verification` or `jwks` (see {@link AUTH_TABLE_NAMES}).
 *
 * @example
 * ```ts
 * import type { AuthTableName } from "service-auth/auth";
 *
 * const kept: AuthTableName[] = ["user", "account"];
 * ```
 */
export type AuthTableName = (typeof AUTH_TABLE_NAMES)[number];

/** Fields whose value must be unique in their table; writes that would repeat one fail with `CONFLICT`. */
export const AUTH_UNIQUE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  user: ["email"],
  session: ["token"],
};

/** requirements §2.1 without the admin fields: Better Auth's core user. */
export const userCoreFields = {
  name: v.string(),
  email: v.string(),
  emailVerified: v.boolean(),
  image: v.optional(v.string()),
  createdAt: v.number(),
  updatedAt: v.number(),
};

/** requirements §2.1, including the admin fields. */
export const userFields = {
  ...userCoreFields,
  role: v.optional(v.string()),
  banned: v.optional(v.boolean()),
  banReason: v.optional(v.string()),
  banExpires: v.optional(v.number()),
};

/** requirements §2.2 without `userId` and the plugin fields: Better Auth's core session. */
const sessionCoreOwnFields = {
  token: v.string(),
  expiresAt: v.number(),
  createdAt: v.number(),
  updatedAt: v.number(),
  ipAddress: v.optional(v.string()),
  userAgent: v.optional(v.string()),
};

/** Better Auth's core session. */
export const sessionCoreFields = { ...sessionCoreOwnFields, userId: v.id("user") };

/** requirements §2.2 without `userId` (the entity style adds it as an edge). */
export const sessionOwnFields = {
  ...sessionCoreOwnFields,
  impersonatedBy: v.optional(v.string()),
  activeOrganizationId: v.optional(v.string()),
};

/** requirements §2.2, including `impersonatedBy` (admin) and `activeOrganizationId`. */
export const sessionFields = { ...sessionOwnFields, userId: v.id("user") };

/** requirements §2.3 without `userId`. */
export const accountOwnFields = {
  accountId: v.string(),
  providerId: v.string(),
  accessToken: v.optional(v.string()),
  refreshToken: v.optional(v.string()),
  idToken: v.optional(v.string()),
  accessTokenExpiresAt: v.optional(v.number()),
  refreshTokenExpiresAt: v.optional(v.number()),
  scope: v.optional(v.string()),
  password: v.optional(v.string()),
  createdAt: v.number(),
  updatedAt: v.number(),
};

/** requirements §2.3. */
export const accountFields = { ...accountOwnFields, userId: v.id("user") };

/** requirements §2.4. */
export const verificationFields = {
  identifier: v.string(),
  value: v.string(),
  expiresAt: v.number(),
  createdAt: v.optional(v.number()),
  updatedAt: v.optional(v.number()),
};

/**
 * requirements §2.5, and the key's algorithm and curve, which Better Auth 1.7 records with each key it
 * makes (1.4 leaves them out; 1.7 signs with a key without them by the configured algorithm).
 */
export const jwksFields = {
  publicKey: v.string(),
  privateKey: v.string(),
  createdAt: v.number(),
  /** Set by a graceful rotation on the keys it replaced: when they stop verifying (ms). */
  expiresAt: v.optional(v.number()),
  alg: v.optional(v.string()),
  crv: v.optional(v.string()),
};
