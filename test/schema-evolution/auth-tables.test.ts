/**
 * The auth tables go through the same schema check (issue 29, item 4): upgrading Better Auth or
 * adding a plugin that adds a required field to `user` or `session` refuses the start while
 * stored users and sessions lack it, and the backfill of docs/app-guide.md (declare the field
 * optional through `defineAuthTables`' extension, migrate, drop the extension) makes it start.
 */
import { describe, expect, it } from "vitest";
import { authSchemaOptions } from "../../examples/app/auth-options.ts";
import exampleSchema from "../../examples/app/schema.ts";
import { defineAuthTables } from "../../src/auth/index.ts";
import { defineMigration } from "../../src/backend/evolution/migration.ts";
import { runMigration } from "../../src/backend/evolution/migration-runner.ts";
import { defineSchema } from "../../src/backend/schema.ts";
import { SchemaCheckRefusal } from "../../src/backend/server.ts";
import { v } from "../../src/backend/values/validators.ts";
import { startExampleApp } from "../helpers/example-app.ts";
import { PROCESS_TEST_TIMEOUT } from "../helpers/process.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";

/** The example's auth options after an upgrade whose plugin adds required `user.plan` and `session.device`. */
const upgraded = {
  ...authSchemaOptions,
  user: {
    additionalFields: {
      ...authSchemaOptions.user.additionalFields,
      plan: { type: "string", required: true, defaultValue: "free", input: false },
    },
  },
  session: {
    additionalFields: { device: { type: "string", required: true, defaultValue: "unknown", input: false } },
  },
} as const;

/** The example schema with the auth tables of `upgraded`; `widen` declares the new fields optional. */
function upgradedSchema(widen: boolean) {
  return defineSchema({
    ...exampleSchema.tables,
    ...defineAuthTables(upgraded, {
      user: {
        indexes: { username: ["username"] },
        ...(widen ? { fields: { plan: v.optional(v.string()) } } : {}),
      },
      ...(widen ? { session: { fields: { device: v.optional(v.string()) } } } : {}),
    }),
  });
}

describe("auth tables and the schema check", { timeout: PROCESS_TEST_TIMEOUT }, () => {
  it("a plugin's new required user and session fields refuse the start until backfilled", async () => {
    const databaseUrl = tempDatabaseFile();
    const first = await startExampleApp({ databaseUrl });
    let userId: string;
    try {
      ({ userId } = await first.signUp("ann@example.com"));
    } finally {
      await first.close();
    }

    const refusal = await startExampleApp({ databaseUrl, schema: upgradedSchema(false) }).catch((e) => e);
    expect(refusal).toBeInstanceOf(SchemaCheckRefusal);
    expect(refusal.message).toContain('1 document of table "user" do not match user.plan: it must be string');
    expect(refusal.message).toContain(userId);
    expect(refusal.message).toContain('table "session" do not match session.device');

    // Widen, backfill (docs/app-guide.md "Changing the schema": auth tables), narrow.
    const widened = await startExampleApp({ databaseUrl, schema: upgradedSchema(true) });
    try {
      const plan = await runMigration(
        widened.backend,
        "backfillUserPlan",
        defineMigration<{ _id: string; _creationTime: number; plan?: string }>({
          table: "user",
          migrateOne: (user) => (user.plan === undefined ? { plan: "free" } : undefined),
        }),
      );
      expect(plan).toMatchObject({ status: "done", processed: 1, changed: 1 });
      const device = await runMigration(
        widened.backend,
        "backfillSessionDevice",
        defineMigration<{ _id: string; _creationTime: number; device?: string }>({
          table: "session",
          migrateOne: (session) => (session.device === undefined ? { device: "unknown" } : undefined),
        }),
      );
      expect(device).toMatchObject({ status: "done", changed: device.processed });
      expect(device.processed).toBeGreaterThanOrEqual(1);
    } finally {
      await widened.close();
    }
    const narrowed = await startExampleApp({ databaseUrl, schema: upgradedSchema(false) });
    try {
      const user = await narrowed.backend.read((db) => db.get("user", userId));
      expect(user).toMatchObject({ email: "ann@example.com", plan: "free" });
    } finally {
      await narrowed.close();
    }
  });
});
