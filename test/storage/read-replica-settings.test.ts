/** `DATABASE_READ_URLS` and `DATABASE_READ_WAIT_MS`: read at start, refused with every problem named. */
import { describe, expect, it } from "vitest";
import { SettingsCheck, SettingsRefusal } from "../../src/backend/settings/problems.ts";
import { readReplicaSettings } from "../../src/backend/settings/read-replicas.ts";
import { readServiceSettings } from "../../src/backend/settings/service-settings.ts";
import { postgresSettings } from "../../src/backend/storage/open.ts";

const primary = "postgres://app:pw@db-primary:5432/app";

/** The refusal `read` throws, as text (it must throw one). */
function refusal(read: () => unknown): string {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(SettingsRefusal);
    return (error as Error).message;
  }
  throw new Error("no refusal");
}

describe("read replica settings", () => {
  it("lists the standbys in order; unset means none and leaves the engine options as they were", () => {
    expect(
      readReplicaSettings({
        DATABASE_READ_URLS: " postgres://app:pw@replica-1:5432/app , postgresql://app@replica-2/app",
        DATABASE_READ_WAIT_MS: "20",
      }),
    ).toEqual({
      readConnectionStrings: ["postgres://app:pw@replica-1:5432/app", "postgresql://app@replica-2/app"],
      readWaitMs: 20,
    });
    expect(readReplicaSettings({})).toEqual({ readConnectionStrings: [], readWaitMs: undefined });
    expect(postgresSettings(primary, {})).not.toHaveProperty("readConnectionStrings");
    expect(
      postgresSettings(primary, {
        DATABASE_READ_URLS: "postgres://app@replica-1/app",
        DATABASE_READ_WAIT_MS: "0",
      }),
    ).toMatchObject({ readConnectionStrings: ["postgres://app@replica-1/app"], readWaitMs: 0 });
  });

  it("refuses bad entries by position, passwords masked, and every problem at once", () => {
    const message = refusal(() =>
      readReplicaSettings({
        DATABASE_READ_URLS:
          "postgres://app:s3cret@replica-1/app,,mysql://root:hunter2@db/app,postgres://app:s3cret@replica-1/app",
        DATABASE_READ_WAIT_MS: "soon",
      }),
    );
    expect(message).toContain("4 settings to fix");
    expect(message).toContain("entry 2 is empty");
    expect(message).toContain(
      'DATABASE_READ_URLS="mysql://root:****@db/app": entry 3 is not a postgres:// URL',
    );
    expect(message).toContain(
      'DATABASE_READ_URLS="postgres://app:****@replica-1/app": entry 4 repeats an earlier one',
    );
    expect(message).toContain(
      'DATABASE_READ_WAIT_MS="soon": not a whole number of milliseconds from 0 to 10000',
    );
    expect(message).not.toMatch(/s3cret|hunter2/);
    expect(refusal(() => readReplicaSettings({ DATABASE_READ_URLS: "postgres://" }))).toContain(
      "entry 1 names no host",
    );
    expect(refusal(() => readReplicaSettings({ DATABASE_READ_WAIT_MS: "-1" }))).toContain(
      "DATABASE_READ_WAIT_MS",
    );
    expect(refusal(() => readReplicaSettings({ DATABASE_READ_WAIT_MS: "60000" }))).toContain(
      "DATABASE_READ_WAIT_MS",
    );
    const many = Array.from({ length: 17 }, (_, i) => `postgres://app@replica-${i}/app`).join(",");
    expect(refusal(() => readReplicaSettings({ DATABASE_READ_URLS: many }))).toContain(
      "lists 17 URLs; at most 16",
    );
  });

  it("is checked at start with the other settings: refused beside a SQLite database, and behind postgresSettings", () => {
    const check = new SettingsCheck();
    readServiceSettings(check, {
      DATABASE_URL: "./data.sqlite",
      DATABASE_READ_URLS: "postgres://app:pw@replica/app",
    });
    expect(check.problems).toEqual([
      expect.objectContaining({
        name: "DATABASE_READ_URLS",
        value: "postgres://app:****@replica/app",
        problem: expect.stringContaining("need a PostgreSQL DATABASE_URL"),
      }),
    ]);
    const onPostgres = new SettingsCheck();
    readServiceSettings(onPostgres, { DATABASE_URL: primary, DATABASE_READ_URLS: "replica:5432" });
    expect(onPostgres.problems.map((p) => p.problem)).toEqual(["entry 1 is not a postgres:// URL"]);
  });
});
