/** `DATABASE_DURABILITY`: read at start; `standby` only for PostgreSQL, anything else refused. */
import { describe, expect, it } from "vitest";
import { durabilitySetting } from "../../src/backend/settings/durability.ts";
import { SettingsCheck, SettingsRefusal } from "../../src/backend/settings/problems.ts";
import { readServiceSettings } from "../../src/backend/settings/service-settings.ts";
import { postgresSettings } from "../../src/backend/storage/open.ts";

const primary = "postgres://app:pw@db-primary:5432/app";

describe("DATABASE_DURABILITY", () => {
  it("is primary unless set to standby, which reaches the engine's options", () => {
    expect(durabilitySetting({})).toBeUndefined();
    expect(durabilitySetting({ DATABASE_DURABILITY: " Standby " })).toBe("standby");
    expect(durabilitySetting({ DATABASE_DURABILITY: "primary" })).toBe("primary");
    expect(postgresSettings(primary, { DATABASE_DURABILITY: "standby" })).toMatchObject({
      durability: "standby",
    });
    // The default leaves the options as they were.
    expect(postgresSettings(primary, { DATABASE_DURABILITY: "primary" })).not.toHaveProperty("durability");
  });

  it("refuses other values, and standby beside a SQLite database, at start with the other settings", () => {
    expect(() => durabilitySetting({ DATABASE_DURABILITY: "synchronous" })).toThrow(SettingsRefusal);
    const onSqlite = new SettingsCheck();
    readServiceSettings(onSqlite, { DATABASE_URL: "./data.sqlite", DATABASE_DURABILITY: "standby" });
    expect(onSqlite.problems).toEqual([
      expect.objectContaining({
        name: "DATABASE_DURABILITY",
        problem: expect.stringContaining("needs a PostgreSQL DATABASE_URL"),
      }),
    ]);
    const onPostgres = new SettingsCheck();
    readServiceSettings(onPostgres, { DATABASE_URL: primary, DATABASE_DURABILITY: "always" });
    expect(onPostgres.problems).toEqual([
      expect.objectContaining({ name: "DATABASE_DURABILITY", problem: 'neither "primary" nor "standby"' }),
    ]);
  });
});
