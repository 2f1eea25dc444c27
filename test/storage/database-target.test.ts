/**
 * `DATABASE_URL`: a plain path, `sqlite:` / `file:` are SQLite; `postgres:` / `postgresql:` are
 * PostgreSQL (several hosts too: a failover formation); any other `scheme://` (a typo, another
 * database) and a PostgreSQL URL that cannot work are refused with the value's password masked,
 * never taken for a file name.
 */
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { SettingError } from "../../src/backend/settings/problems.ts";
import { databaseTarget } from "../../src/backend/storage/open.ts";
import { parseHostList } from "../../src/backend/storage/postgres/hosts.ts";

function refusal(url: string): SettingError {
  try {
    databaseTarget(url);
  } catch (error) {
    if (error instanceof SettingError) return error;
    throw error;
  }
  throw new Error(`${url} was accepted`);
}

describe("databaseTarget", () => {
  it("accepts plain paths, sqlite:, file:, postgres: and postgresql:", () => {
    expect(databaseTarget(undefined)).toEqual({ kind: "sqlite", filename: resolve(".data/service.sqlite") });
    expect(databaseTarget("./x.sqlite")).toEqual({ kind: "sqlite", filename: resolve("x.sqlite") });
    expect(databaseTarget("sqlite:./y.db")).toEqual({ kind: "sqlite", filename: resolve("y.db") });
    expect(databaseTarget("file:///tmp/z.db")).toEqual({ kind: "sqlite", filename: "/tmp/z.db" });
    expect(databaseTarget(":memory:")).toEqual({ kind: "sqlite", filename: ":memory:" });
    for (const url of ["postgres://u:p@h:5432/db", "postgresql://h/db", "POSTGRES://h/db?sslmode=require"])
      expect(databaseTarget(url)).toEqual({ kind: "postgres", connectionString: url });
  });

  it("refuses unknown schemes, masking the password", () => {
    const typo = refusal("postgress://postgres:secret@127.0.0.1:5433/svc");
    expect(typo.problem).toMatchObject({
      name: "DATABASE_URL",
      value: "postgress://postgres:****@127.0.0.1:5433/svc",
      problem: 'unknown scheme "postgress:"',
    });
    expect(typo.message).not.toContain("secret");
    expect(refusal("mysql://x@y/z").problem.problem).toBe('unknown scheme "mysql:"');
    expect(refusal("https://example.com/db").problem.problem).toBe('unknown scheme "https:"');
  });

  it("accepts a multi-host URL (a failover formation's), refusing one that could write to a standby", () => {
    const formation = "postgres://app:pw@127.0.0.1:6001,127.0.0.1:6002/db?target_session_attrs=read-write";
    expect(databaseTarget(formation)).toEqual({ kind: "postgres", connectionString: formation });
    // Several hosts without target_session_attrs: the engine still looks for the primary.
    expect(databaseTarget("postgres://app:pw@h1,h2/db").kind).toBe("postgres");
    const any = refusal("postgres://app:pw@127.0.0.1:6001,127.0.0.1:6002/db?target_session_attrs=any");
    expect(any.problem.value).toBe(
      "postgres://app:****@127.0.0.1:6001,127.0.0.1:6002/db?target_session_attrs=any",
    );
    expect(any.problem.problem).toMatch(/writes could land on a standby/);
    expect(any.problem.fix).toMatch(/target_session_attrs=read-write/);
    const standby = refusal("postgres://app:pw@h1,h2/db?target_session_attrs=prefer-standby");
    expect(standby.problem.problem).toMatch(/asks for a standby/);
    expect(standby.problem.fix).toMatch(/DATABASE_READ_URLS/);
    expect(refusal("postgres://app:pw@h1:port,h2/db").problem.problem).toBe("is not a valid URL");
    expect(refusal("postgres://app:pw@h1,,h2/db").problem.problem).toBe("is not a valid URL");
    // A comma in the password or the path is no second host.
    expect(databaseTarget("postgres://app:p,w@h/db").kind).toBe("postgres");
  });
});

describe("parseHostList (a multi-host PostgreSQL URL, as libpq reads it)", () => {
  it("lists every host with its port and makes a one-host URL for each, without target_session_attrs", () => {
    const list = parseHostList(
      "postgres://app:p%40ss@10.0.0.1:5433,db-2,[::1]:6000/svc?sslmode=disable&target_session_attrs=read-write&application_name=x",
    );
    expect(list.hosts.map(({ host, port }) => `${host}|${port}`)).toEqual([
      "10.0.0.1|5433",
      "db-2|5432",
      "::1|6000",
    ]);
    expect(list.target).toBe("read-write");
    expect(list.hosts.map(list.urlFor)).toEqual([
      "postgres://app:p%40ss@10.0.0.1:5433/svc?sslmode=disable&application_name=x",
      "postgres://app:p%40ss@db-2/svc?sslmode=disable&application_name=x",
      "postgres://app:p%40ss@[::1]:6000/svc?sslmode=disable&application_name=x",
    ]);
  });

  it("keeps a one-host URL exactly as written; asks for the primary only when told to or given several hosts", () => {
    const one = parseHostList("postgresql://h/db?host=/run/postgresql");
    expect(one.target).toBe("any");
    expect(one.urlFor(one.hosts[0])).toBe("postgresql://h/db?host=/run/postgresql");
    expect(parseHostList("postgres://h/db?target_session_attrs=primary").target).toBe("read-write");
    expect(parseHostList("postgres://h1,h2/db").target).toBe("read-write");
    expect(() => parseHostList("postgres://h1,h2/db?target_session_attrs=standby")).toThrow(
      /asks for a standby/,
    );
  });
});
