/**
 * The admin console's queries (`src/auth/admin/functions.ts`) on real SQLite, called as a given
 * identity (what steps 1+2 establish): who may call them (administrators by role, several roles
 * comma-separated, a configured role list; `UNAUTHORIZED` without a user, `FORBIDDEN` otherwise,
 * from every query), and what each answers: the users list's search, page size bounds, order and
 * paging; a user's sessions without tokens, newest first; the signing keys without key material.
 * test/admin/admin-access.test.ts checks the same rule through the example app's HTTP routes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createAdminFunctions,
  hasRole,
  MAX_PAGE_SIZE,
  MAX_SEARCH_LENGTH,
  requireAdmin,
} from "../../src/auth/admin/functions.ts";
import { defineAuthTables } from "../../src/auth/schema/auth-schema.ts";
import { functionsFor, type UserIdentity } from "../../src/backend/functions/define.ts";
import { BackendRuntime } from "../../src/backend/runtime.ts";
import { defineSchema } from "../../src/backend/schema.ts";
import { SqliteEngine } from "../../src/backend/storage/sqlite/engine.ts";
import { v } from "../../src/backend/values/validators.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";

process.env.LOG_LEVEL ??= "silent";

const schema = defineSchema({ ...defineAuthTables() });
const { internalMutation, query } = functionsFor(schema);

let backend: BackendRuntime;
beforeAll(async () => {
  backend = new BackendRuntime({
    schema,
    modules: {
      admin: createAdminFunctions(),
      staff: createAdminFunctions({ adminRoles: ["moderator", "owner"] }),
      direct: {
        // `requireAdmin` with its default roles.
        viewer: query({ args: {}, handler: (ctx) => requireAdmin(ctx) }),
      },
      seed: {
        insert: internalMutation({
          args: { table: v.string(), doc: v.any() },
          handler: (ctx, { table, doc }) => ctx.db.insert(table as any, doc),
        }),
        remove: internalMutation({
          args: { id: v.string() },
          handler: (ctx, { id }) => ctx.db.delete(id as any),
        }),
      },
    },
    engine: new SqliteEngine({ filename: tempDatabaseFile() }),
  });
  await backend.start();
});
afterAll(() => backend?.close());

const insert = async (table: string, doc: Record<string, unknown>) =>
  (await backend.runMutation("seed:insert", { table, doc }, { allowInternal: true })).value as string;

let created = 1_000;
/** A user row (each created after the previous one). */
const addUser = (name: string, extra: Record<string, unknown> = {}) =>
  insert("user", {
    name,
    email: `${name.toLowerCase().replaceAll(" ", ".")}@example.com`,
    emailVerified: true,
    createdAt: ++created,
    updatedAt: created,
    ...extra,
  });

/** The identity steps 1+2 give a signed-in user (a session id names the session). */
const as = (userId: string | null): UserIdentity | null =>
  userId === null
    ? null
    : { subject: userId, userId, sessionId: "s1", issuer: "https://auth.example", tokenIdentifier: "t" };
const call = async (path: string, args: Record<string, unknown>, userId: string | null) =>
  (await backend.runQuery(path, args, { identity: as(userId) })).value as any;

describe("hasRole", () => {
  it("reads Better Auth's comma-separated roles, trimmed, each compared whole", () => {
    expect(hasRole("admin", ["admin"])).toBe(true);
    expect(hasRole("user,admin", ["admin"])).toBe(true);
    expect(hasRole("user, admin ", ["admin"])).toBe(true);
    expect(hasRole("user", ["admin"])).toBe(false);
    expect(hasRole("administrator", ["admin"])).toBe(false);
    expect(hasRole("adm,in", ["admin"])).toBe(false);
    expect(hasRole("", ["admin"])).toBe(false);
  });

  it("is false for a role that is not text", () => {
    expect(hasRole(undefined, ["admin"])).toBe(false);
    expect(hasRole(null, ["null"])).toBe(false);
    expect(hasRole(["admin"], ["admin"])).toBe(false);
  });
});

describe("who may call the admin queries", () => {
  let admin: string;
  let plain: string;
  let many: string;
  let moderator: string;
  beforeAll(async () => {
    admin = await addUser("Root Admin", { role: "admin" });
    plain = await addUser("Plain User", { role: "user" });
    many = await addUser("Many Roles", { role: "user, admin" });
    moderator = await addUser("Mod Erator", { role: "moderator" });
  });

  const calls: [string, Record<string, unknown>][] = [
    ["viewer", {}],
    ["users", {}],
    ["keys", {}],
    ["sessions", {}],
  ];

  it.each(calls)(
    "%s: UNAUTHORIZED without a user, or as one deleted since (an admin then)",
    async (fn, args) => {
      const sessionArgs = fn === "sessions" ? { userId: admin } : args;
      const gone = await addUser(`Gone ${fn}`, { role: "admin" });
      await backend.runMutation("seed:remove", { id: gone }, { allowInternal: true });
      for (const caller of [null, gone]) {
        await expect(call(`admin:${fn}`, sessionArgs, caller)).rejects.toMatchObject({
          code: "UNAUTHORIZED",
          message: "Sign in first",
        });
      }
    },
  );

  it.each(calls)(
    "%s: FORBIDDEN for a user without an admin role, even without any role",
    async (fn, args) => {
      const sessionArgs = fn === "sessions" ? { userId: admin } : args;
      const noRole = await addUser(`No Role ${fn}`);
      for (const caller of [plain, noRole, moderator]) {
        await expect(call(`admin:${fn}`, sessionArgs, caller)).rejects.toMatchObject({
          code: "FORBIDDEN",
          message: "Administrators only",
        });
      }
      // The same queries with a configured role list: the moderator may, the admin may not.
      await expect(call(`staff:${fn}`, sessionArgs, moderator)).resolves.toBeDefined();
      await expect(call(`staff:${fn}`, sessionArgs, admin)).rejects.toMatchObject({ code: "FORBIDDEN" });
    },
  );

  it("viewer answers the administrator's id, name, email and role; one admin role of several is enough", async () => {
    expect(await call("admin:viewer", {}, admin)).toEqual({
      _id: admin,
      name: "Root Admin",
      email: "root.admin@example.com",
      role: "admin",
    });
    expect(await call("admin:viewer", {}, many)).toMatchObject({ _id: many, role: "user, admin" });
    expect(await call("staff:viewer", {}, moderator)).toMatchObject({ _id: moderator, role: "moderator" });
  });

  it("requireAdmin's default role list is admin", async () => {
    expect(await call("direct:viewer", {}, admin)).toMatchObject({ _id: admin });
    await expect(call("direct:viewer", {}, moderator)).rejects.toMatchObject({ code: "FORBIDDEN" });
  });
});

describe("what the admin queries answer", () => {
  let admin: string;
  beforeAll(async () => {
    admin = await addUser("List Admin", { role: "admin" });
  });
  const users = (args: Record<string, unknown>) => call("admin:users", args, admin);
  const emails = (page: { email: string }[]) => page.map((u) => u.email);

  it("users: search matches the name or the email, ignoring case and surrounding spaces; newest first", async () => {
    await addUser("Findme Carol", { email: "carol@example.com" });
    await addUser("Dave", { email: "FINDME-dave@Example.com" });
    await addUser("Other", { email: "other@example.com" });
    expect(emails((await users({ search: "  FindMe  " })).page)).toEqual([
      "FINDME-dave@Example.com",
      "carol@example.com",
    ]);
    // Only spaces is no search: every user, the newest first.
    const all = await users({ search: "   ", numItems: MAX_PAGE_SIZE });
    expect(all.page[0].email).toBe("other@example.com");
    expect(all.page.length).toBeGreaterThan(3);
    expect(emails((await users({})).page)).toEqual(emails(all.page).slice(0, 20));
  });

  it("users: search text of at most MAX_SEARCH_LENGTH characters after trimming", async () => {
    expect((await users({ search: "x".repeat(MAX_SEARCH_LENGTH) })).page).toEqual([]);
    expect((await users({ search: ` ${"x".repeat(MAX_SEARCH_LENGTH)} ` })).page).toEqual([]);
    await expect(users({ search: "x".repeat(MAX_SEARCH_LENGTH + 1) })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: `Search text has at most ${MAX_SEARCH_LENGTH} characters`,
    });
  });

  it("users: pages of 20 by default, at least 1 and at most MAX_PAGE_SIZE, whole numbers; the cursor continues", async () => {
    for (let i = 0; i < MAX_PAGE_SIZE + 5; i++) await addUser(`Bulk ${i}`);
    const bulk = (args: Record<string, unknown>) => users({ search: "bulk", ...args });
    const first = await bulk({});
    expect(emails(first.page)).toEqual(Array.from({ length: 20 }, (_, i) => `bulk.${104 - i}@example.com`));
    expect(first.isDone).toBe(false);
    const next = await bulk({ cursor: first.continueCursor, numItems: 2.9 });
    expect(emails(next.page)).toEqual(["bulk.84@example.com", "bulk.83@example.com"]);
    for (const numItems of [0, -3, 0.5])
      expect((await bulk({ numItems, cursor: null })).page).toHaveLength(1);
    const most = await bulk({ numItems: 1000 });
    expect(most.page).toHaveLength(MAX_PAGE_SIZE);
    expect(most.isDone).toBe(false);
    const rest = await bulk({ numItems: 1000, cursor: most.continueCursor });
    expect(emails(rest.page)).toEqual([
      "bulk.4@example.com",
      "bulk.3@example.com",
      "bulk.2@example.com",
      "bulk.1@example.com",
      "bulk.0@example.com",
    ]);
    expect(rest.isDone).toBe(true);
  });

  it("users: each row with its ban and role, null for what the user lacks, nothing else", async () => {
    const banned = await addUser("Row Banned", {
      role: "user",
      banned: true,
      banReason: "spam",
      banExpires: 99,
    });
    const unbanned = await addUser("Row Unbanned", { banned: false, image: "https://img" });
    const page = (await users({ search: "row " })).page;
    expect(page).toStrictEqual([
      {
        _id: unbanned,
        name: "Row Unbanned",
        email: "row.unbanned@example.com",
        role: null,
        banned: false,
        banReason: null,
        banExpires: null,
        createdAt: created,
      },
      {
        _id: banned,
        name: "Row Banned",
        email: "row.banned@example.com",
        role: "user",
        banned: true,
        banReason: "spam",
        banExpires: 99,
        createdAt: created - 1,
      },
    ]);
  });

  it("sessions: the user's own, newest first, without token or user id; the caller's own marked current", async () => {
    const owner = await addUser("Session Owner", { role: "admin" });
    const other = await addUser("Session Other");
    const session = (userId: string, createdAt: number, extra: Record<string, unknown> = {}) =>
      insert("session", {
        userId,
        token: `tok-${createdAt}-${userId}`,
        expiresAt: 10_000,
        createdAt,
        updatedAt: createdAt,
        ...extra,
      });
    const s5 = await session(owner, 5, { ipAddress: "10.0.0.1", userAgent: "UA", impersonatedBy: admin });
    const s9 = await session(owner, 9);
    const s7 = await session(owner, 7);
    await session(other, 8);
    const rows = await call("admin:sessions", { userId: owner }, admin);
    const row = (id: string, createdAt: number, current = false) => ({
      _id: id,
      ipAddress: null,
      userAgent: null,
      createdAt,
      expiresAt: 10_000,
      impersonatedBy: null,
      current,
    });
    expect(rows).toStrictEqual([
      row(s9, 9),
      row(s7, 7),
      { ...row(s5, 5), ipAddress: "10.0.0.1", userAgent: "UA", impersonatedBy: admin },
    ]);
    // The owner, an administrator too, looks at their own sessions from session s7.
    const own = (
      await backend.runQuery(
        "admin:sessions",
        { userId: owner },
        { identity: { ...(as(owner) as UserIdentity), sessionId: s7 } },
      )
    ).value as { _id: string; current: boolean }[];
    expect(own.map((r) => [r._id, r.current])).toStrictEqual([
      [s9, false],
      [s7, true],
      [s5, false],
    ]);
  });

  it("keys: each signing key's id, creation time and state, newest first, no key material", async () => {
    const older = await insert("jwks", { publicKey: "pub-1", privateKey: "priv-1", createdAt: 20 });
    const newer = await insert("jwks", { publicKey: "pub-2", privateKey: "priv-2", createdAt: 10 });
    const retiring = await insert("jwks", {
      publicKey: "pub-3",
      privateKey: "priv-3",
      createdAt: 5,
      expiresAt: 99_000,
    });
    // The key with the latest `createdAt` signs (as Better Auth picks it); a graceful rotation's
    // replaced key is retiring until its `expiresAt`.
    expect(await call("admin:keys", {}, admin)).toStrictEqual([
      { kid: retiring, createdAt: 5, state: "retiring", expiresAt: 99_000 },
      { kid: newer, createdAt: 10, state: "standby" },
      { kid: older, createdAt: 20, state: "signing" },
    ]);
  });
});
