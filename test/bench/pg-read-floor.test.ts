/**
 * The floor of `npm run bench -- pg-throughput` (bench/fixtures/raw-pg-read.ts) must do the work
 * our authenticated PostgreSQL query does, no less: for the same request it answers the same bytes
 * as our instance (status, body, headers but the date), and it sends PostgreSQL the same statements
 * in the same order (read from the server's statement log, told apart by application name).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callFunction } from "../../bench/lib/api-call.ts";
import { rs256Tokens } from "../../bench/lib/rs256-tokens.ts";
import { type SpawnedServer, spawnServer } from "../../bench/lib/spawn.ts";
import { loggedTransaction } from "../helpers/pg-statement-log.ts";
import { postgresBinDir, startPostgres, type TestPostgres } from "../helpers/postgres.ts";

const ISSUER = "https://floor.test";
const AUDIENCE = "floor-test";
const fixture = (name: string) => fileURLToPath(new URL(`../../bench/fixtures/${name}`, import.meta.url));

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string>;
}

async function ask(url: string, token: string): Promise<Answer> {
  const response = await fetch(`${url}/api/query`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ path: "bench:me", args: {} }),
  });
  const headers = Object.fromEntries(response.headers);
  // The only header whose value may differ between two answers.
  delete headers.date;
  return { status: response.status, body: await response.text(), headers };
}

describe.skipIf(!postgresBinDir)("the PostgreSQL read floor", () => {
  let pg: TestPostgres;
  let ours: SpawnedServer;
  let floor: SpawnedServer;
  let token: string;
  let userId: string;

  beforeAll(async () => {
    // Every statement logged with the application name of its connection in front.
    pg = await startPostgres(["log_statement=all", "log_line_prefix=%a@"]);
    const url = await pg.createDatabase();
    const { jwk, sign } = await rs256Tokens(ISSUER, AUDIENCE);
    const env = { BENCH_JWK: jwk, BENCH_ISSUER: ISSUER, BENCH_AUDIENCE: AUDIENCE, DATABASE_URL: url };
    ours = await spawnServer(fixture("postgres-server.ts"), env);
    // Started after ours migrated the database: the floor reads our tables.
    floor = await spawnServer(fixture("raw-pg-read.ts"), env);
    const created = await callFunction(ours.url, "mutation", "bench:createSession", {});
    userId = created.userId;
    token = await sign(userId, created.sessionId);
    // Both identity caches warm: the benchmark measures cached tokens.
    for (const server of [ours, floor]) expect((await ask(server.url, token)).status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await floor?.stop();
    await ours?.stop();
    await pg?.stop();
  });

  it("answers the bytes our instance answers", async () => {
    const [a, b] = [await ask(ours.url, token), await ask(floor.url, token)];
    expect(a.status).toBe(200);
    expect(JSON.parse(a.body).value.name).toBe("bench");
    expect(b).toEqual(a);
    // A token it cannot verify is refused, as ours refuses it.
    expect((await ask(floor.url, `${token}x`)).status).toBe(401);
  });

  it("sends PostgreSQL the statements our engine sends for the read", async () => {
    const log = join(pg.dir, "server.log");
    // The request's transaction, not a background one of the server's: it reads the user by id.
    const transaction = (application: string, from: number) =>
      loggedTransaction(log, application, from, userId);
    const measure = async (url: string, application: string) => {
      const from = readFileSync(log).length;
      expect((await ask(url, token)).status).toBe(200);
      return transaction(application, from);
    };
    const ourStatements = await measure(ours.url, "service-auth");
    expect(ourStatements[0]).toMatch(/^BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY/);
    expect(ourStatements).toHaveLength(3);
    expect(await measure(floor.url, "service-auth-floor")).toEqual(ourStatements);
  });
});
