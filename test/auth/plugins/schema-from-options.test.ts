/**
 * Auth tables from the Better Auth options (issue 9 item 1): both declaration styles, application
 * extensions, the generated schema file and the CLI command, and what the data functions say about
 * a model the schema does not know.
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getAuthTables } from "better-auth/db";
import { admin, anonymous, organization, siwe, twoFactor, username } from "better-auth/plugins";
import { defineAuthEnts, defineAuthTables } from "service-auth/auth";
import { defineEntSchema, defineSchema, type TableDefinition, v } from "service-auth/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApi } from "../../../src/auth/data/functions.ts";
import { authTableInfo, authTables as specTables } from "../../../src/auth/schema/auth-schema.ts";
import { authTablesSource } from "../../../src/auth/schema/source.ts";
import { apiKey } from "../../helpers/api-key-plugin.ts";
import { ROOT, runCli } from "../../helpers/process.ts";
import { startTestBackend } from "../../helpers/service.ts";

const options = {
  plugins: [username(), twoFactor(), organization(), anonymous(), apiKey(), admin()],
};
const extensions = {
  user: { fields: { nickname: v.optional(v.string()) }, indexes: { nickname: ["nickname"] } },
};

const shapeOf = (tables: Record<string, { fields: object; indexes: { name: string; fields: string[] }[] }>) =>
  Object.fromEntries(
    Object.entries(tables).map(([name, t]) => [
      name,
      { fields: t.fields, indexes: t.indexes, info: authTableInfo(t as never) },
    ]),
  );

describe("defineAuthTables(options, extensions)", () => {
  const tables = defineAuthTables(options, extensions);

  it("has every table and field Better Auth describes, under their model and field names", () => {
    const described = getAuthTables({ ...options, plugins: [...options.plugins] });
    for (const [model, table] of Object.entries(described)) {
      expect(Object.keys(tables)).toContain(table.modelName);
      for (const [field, attribute] of Object.entries(table.fields)) {
        expect(Object.keys((tables as any)[table.modelName].fields), `${model}.${field}`).toContain(
          attribute.fieldName ?? field,
        );
      }
    }
    expect(Object.keys(tables)).toContain("jwks");
  });

  it("indexes every unique, indexed and referencing field; records the unique ones", () => {
    const names = (t: { indexes: { name: string }[] }) => t.indexes.map((i) => i.name);
    expect(names(tables.user)).toEqual(expect.arrayContaining(["email", "username", "nickname"]));
    expect(names(tables.member)).toEqual(expect.arrayContaining(["organizationId", "userId"]));
    expect(names(tables.account)).toEqual(expect.arrayContaining(["accountId", "userId"]));
    expect(authTableInfo(tables.user)).toEqual({ model: "user", unique: ["email", "username"] });
    expect(authTableInfo(tables.organization)?.unique).toEqual(["slug"]);
  });

  it("keeps requirements §2's types for the fields it lists", () => {
    for (const model of ["user", "session", "account", "verification", "jwks"] as const) {
      for (const [field, validator] of Object.entries(specTables[model].fields)) {
        if (field in tables[model].fields)
          expect((tables[model].fields as any)[field], `${model}.${field}`).toEqual(validator);
      }
    }
    // Better Auth calls verification timestamps required; requirements §2.4 keeps them optional.
    expect(tables.verification.fields.createdAt.isOptional).toBe(true);
  });

  it("stores dates as numbers and references as ids of the referenced table", () => {
    expect(tables.apikey.fields.expiresAt).toEqual(v.optional(v.number()));
    expect(tables.member.fields.organizationId).toEqual(v.id("organization"));
    expect(tables.invitation.fields.inviterId).toEqual(v.id("user"));
  });

  it("references a renamed model's table (user.modelName), in core and plugin tables alike", () => {
    const renamed = defineAuthTables({ user: { modelName: "users" }, plugins: [organization()] });
    expect(Object.keys(renamed)).toContain("users");
    expect(renamed.account.fields.userId).toEqual(v.id("users"));
    expect(renamed.session.fields.userId).toEqual(v.id("users"));
    expect((renamed as any).member.fields.userId).toEqual(v.id("users"));
  });

  it("the zero-argument and extensions-only forms are unchanged", () => {
    expect(shapeOf(defineAuthTables())).toEqual(shapeOf(specTables));
    const extended = defineAuthTables(extensions);
    expect(Object.keys(extended)).toEqual(["user", "session", "account", "verification", "jwks"]);
    expect(extended.user.fields.nickname).toEqual(v.optional(v.string()));
  });

  it("the entity style compiles to the same tables, with edges for references", () => {
    const ents = defineEntSchema(defineAuthEnts(options, extensions));
    const plain = defineSchema(tables);
    const entTables: Record<string, TableDefinition> = ents.tables;
    for (const [name, table] of Object.entries(plain.tables)) {
      expect(Object.keys(entTables[name].fields).sort(), name).toEqual(Object.keys(table.fields).sort());
      expect(entTables[name].indexes.map((i) => i.name).sort(), name).toEqual(
        table.indexes.map((i) => i.name).sort(),
      );
      expect(authTableInfo(entTables[name])).toEqual(authTableInfo(table));
    }
    const edge = (from: string, name: string) => ents.edges.find((e) => e.from === from && e.name === name);
    expect(edge("user", "sessions")).toMatchObject({ to: "session", cardinality: "many", field: "userId" });
    expect(edge("session", "user")).toMatchObject({ to: "user", cardinality: "one", field: "userId" });
    expect(edge("member", "organization")).toMatchObject({ to: "organization", cardinality: "one" });
  });
});

describe("the generated schema file", () => {
  let dir: string;
  beforeAll(() => {
    // A directory where `service-auth/*` resolves to this checkout, as in an application.
    dir = mkdtempSync(join(tmpdir(), "auth-generate-"));
    mkdirSync(join(dir, "node_modules"));
    symlinkSync(ROOT, join(dir, "node_modules/service-auth"));
  });

  it("declares the same tables, indexes and auth models as defineAuthTables", async () => {
    const expected = defineAuthTables(options, extensions);
    const file = join(dir, "table-specs.ts");
    writeFileSync(file, authTablesSource(expected, "test"));
    const generated = (await import(file)).authTables;
    expect(shapeOf(generated)).toEqual(shapeOf(expected));
  });

  it("`npm run cli -- auth generate` prints the example's tables", async () => {
    const result = await runCli(["auth", "generate"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("export const authTables = {");
    expect(result.stdout).toContain('.index("username", ["username"])');
    expect(result.stdout).toContain('{ model: "user", unique: ["email"] }');
    const usage = await runCli(["auth", "nonsense"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("auth generate");
  }, 60_000);
});

describe("data functions on generated tables", () => {
  const schema = defineSchema(defineAuthTables(options));
  let backend: Awaited<ReturnType<typeof startTestBackend>>;
  const internal = { allowInternal: true };
  beforeAll(async () => {
    backend = await startTestBackend({ schema, modules: { auth: createApi(schema) } });
  });
  afterAll(() => backend?.close());

  it("accept every plugin model and enforce its unique fields", async () => {
    const now = Date.now();
    const user = {
      name: "U",
      email: "u@example.com",
      emailVerified: false,
      createdAt: now,
      updatedAt: now,
      username: "u",
    };
    const created = (await backend.runMutation("auth:create", { model: "user", data: user }, internal))
      .value as any;
    await expect(
      backend.runMutation(
        "auth:create",
        { model: "user", data: { ...user, email: "v@example.com" } },
        internal,
      ),
    ).rejects.toMatchObject({ code: "CONFLICT", data: { model: "user", field: "username" } });
    const twoFactor = { secret: "s", backupCodes: "[]", userId: created._id };
    await backend.runMutation("auth:create", { model: "twoFactor", data: twoFactor }, internal);
    const found = await backend.runQuery(
      "auth:findOne",
      { model: "twoFactor", where: [{ field: "userId", value: created._id }] },
      internal,
    );
    expect(found.value).toMatchObject(twoFactor);
  });

  it("refuse a model the schema lacks with the model's name and the fix, not a validator dump", async () => {
    const walletModel = Object.keys(
      siwe({ domain: "x", getNonce: async () => "n", verifyMessage: async () => true }).schema,
    )[0];
    const error = await backend
      .runMutation("auth:create", { model: walletModel, data: { address: "0x" } }, internal)
      .catch((e) => e);
    expect(error).toMatchObject({ code: "INVALID_ARGUMENTS" });
    expect(error.message).toContain(`"${walletModel}"`);
    expect(error.message).toContain("defineAuthTables(authOptions)");
    expect(error.message).toContain("auth generate");
    expect(error.message).not.toMatch(/\| object/);
  });

  it("name the model and the field of bad data, and say NaN for NaN", async () => {
    const now = Date.now();
    const bad = {
      name: "N",
      email: "n@example.com",
      emailVerified: false,
      createdAt: Number.NaN,
      updatedAt: now,
    };
    const error = await backend
      .runMutation("auth:create", { model: "user", data: bad }, internal)
      .catch((e) => e);
    expect(error).toMatchObject({ code: "INVALID_ARGUMENTS" });
    expect(error.message).toContain('Auth model "user"');
    expect(error.message).toContain("args.data.createdAt must be number, got NaN");
  });
});
