/**
 * A PostgreSQL that cannot be reached or entered at start: the example server exits 1 with one
 * report naming host, port, database and the driver's cause (connection refused, password
 * authentication failed, database does not exist) and what to check; never "try again shortly"
 * (the URL is wrong, waiting fixes nothing), never the password, never a stack trace.
 */
import pg from "pg";
import { describe, expect, it } from "vitest";
import { freePort } from "../helpers/example-app.ts";
import { SERVICE_AUTH_BIN, START_EXAMPLE } from "../helpers/example-server.ts";
import { postgresBinDir, usePostgres } from "../helpers/postgres.ts";
import { PROCESS_TEST_TIMEOUT, runTsx } from "../helpers/process.ts";
import { eventually } from "../helpers/wait.ts";

const STACK = /\n\s+at /;

const start = async (databaseUrl: string) =>
  runTsx(SERVICE_AUTH_BIN, START_EXAMPLE, {
    env: { DATABASE_URL: databaseUrl, PORT: String(await freePort()), LOG_LEVEL: "info" },
  });

function expectReport(
  stderr: string,
  parts: { host: string; port: number; database: string; cause: RegExp },
) {
  expect(stderr).toContain(
    `cannot connect to PostgreSQL at ${parts.host}:${parts.port}, database "${parts.database}"`,
  );
  expect(stderr).toMatch(parts.cause);
  expect(stderr).toMatch(/\n {4}fix: /);
  expect(stderr).not.toMatch(/try again shortly|DATABASE_UNAVAILABLE/);
  expect(stderr).not.toMatch(STACK);
  expect(stderr).not.toMatch(/listening on|generated/);
}

describe.skipIf(!postgresBinDir)("PostgreSQL errors at start", { timeout: PROCESS_TEST_TIMEOUT }, () => {
  const server = usePostgres();

  it("a wrong password names the user, the server and the cause, not the password", async () => {
    const { port, sql } = server();
    // The test server trusts everyone; make it ask the new role for its password.
    const [{ hba_file: hba }] = await sql("SHOW hba_file");
    await sql(
      `COPY (SELECT unnest(ARRAY['local all all trust', 'host all postgres 127.0.0.1/32 trust',
        'host all all 127.0.0.1/32 scram-sha-256'])) TO '${hba}'`,
    );
    await sql("SELECT pg_reload_conf()");
    await sql("CREATE ROLE app LOGIN PASSWORD 'right-pw'");
    const url = await server().createDatabase();
    const wrong = url.replace("postgres@", "app:wrong-pw@");
    // The reload is asynchronous: wait until the server asks for the password.
    await eventually(async () => {
      const client = new pg.Client({ connectionString: wrong });
      await expect(client.connect()).rejects.toMatchObject({ code: "28P01" });
      await client.end().catch(() => undefined);
    });
    const res = await start(wrong);
    expect(res.code).toBe(1);
    expectReport(res.stderr, {
      host: "127.0.0.1",
      port,
      database: new URL(url).pathname.slice(1),
      cause: /password authentication failed for user "app"/,
    });
    expect(res.stderr).toMatch(/user "app"/);
    expect(res.stderr).toMatch(/fix: correct the user name and password in DATABASE_URL/);
    expect(res.stderr).not.toContain("wrong-pw");
  });

  it("a database that does not exist says so and how to create it", async () => {
    const { port } = server();
    const res = await start(`postgres://postgres@127.0.0.1:${port}/no_such_db`);
    expect(res.code).toBe(1);
    expectReport(res.stderr, {
      host: "127.0.0.1",
      port,
      database: "no_such_db",
      cause: /database "no_such_db" does not exist/,
    });
    expect(res.stderr).toMatch(/createdb .*no_such_db/);
  });

  it("a closed port: connection refused", async () => {
    const port = await freePort();
    const res = await start(`postgres://postgres:pw-77@127.0.0.1:${port}/svc`);
    expect(res.code).toBe(1);
    expectReport(res.stderr, { host: "127.0.0.1", port, database: "svc", cause: /connection refused/ });
    expect(res.stderr).not.toContain("pw-77");
  });
});
