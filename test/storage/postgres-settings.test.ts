/** The PostgreSQL engine's cross-instance settings read from the environment (`openEngine`). */
import { describe, expect, it } from "vitest";
import { postgresSettings } from "../../src/backend/storage/open.ts";

const url = "postgres://app@db.internal:6432/app";

describe("PostgreSQL settings", () => {
  it("defaults to a direct connection with LISTEN/NOTIFY", () => {
    expect(postgresSettings(url, {})).toEqual({
      connectionString: url,
      pooler: "none",
      notify: true,
      listenConnectionString: undefined,
      pollIntervalMs: undefined,
    });
  });

  it("DATABASE_NOTIFY=off polls; DATABASE_POLL_MS sets the period", () => {
    expect(postgresSettings(url, { DATABASE_NOTIFY: "off", DATABASE_POLL_MS: "250" })).toMatchObject({
      notify: false,
      pollIntervalMs: 250,
    });
  });

  it("behind a transaction pooler, LISTENs only on DATABASE_LISTEN_URL, else polls", () => {
    expect(postgresSettings(url, { DATABASE_POOLER: "transaction" })).toMatchObject({
      pooler: "transaction",
      notify: false,
    });
    const direct = "postgres://app@db.internal:5432/app";
    expect(
      postgresSettings(url, { DATABASE_POOLER: "pgbouncer", DATABASE_LISTEN_URL: direct }),
    ).toMatchObject({ pooler: "transaction", notify: true, listenConnectionString: direct });
  });

  it("refuses values it does not understand, naming the setting", () => {
    expect(() => postgresSettings(url, { DATABASE_POOLER: "statement" })).toThrow(/DATABASE_POOLER/);
    expect(() => postgresSettings(url, { DATABASE_NOTIFY: "sometimes" })).toThrow(/DATABASE_NOTIFY/);
    expect(() => postgresSettings(url, { DATABASE_POLL_MS: "1" })).toThrow(/DATABASE_POLL_MS/);
    expect(() => postgresSettings(url, { DATABASE_POLL_MS: "soon" })).toThrow(/DATABASE_POLL_MS/);
  });
});
