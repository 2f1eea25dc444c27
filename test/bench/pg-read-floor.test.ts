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
import { postgresBinDir, startPostgres, type TestPostgres } from "../helpers/postgres.ts";
import { eventually } from "../helpers/wait.ts";

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

  beforeAll(async () => {
    // Every statement logged with the application name of its connection in front.
    pg = await startPostgres(["log_statement=all", "log_line_prefix=%a@"]);
    const url = await pg.createDatabase();
    const { jwk, sign } = await rs256Tokens(ISSUER, AUDIENCE);
    const env = { BENCH_JWK: jwk, BENCH_ISSUER: ISSUER, BENCH_AUDIENCE: AUDIENCE, DATABASE_URL: url };
    ours = await spawnServer(fixture("postgres-server.ts"), env);
    // Started after ours migrated the database: the floor reads our tables.
    floor = await spawnServer(fixture("raw-pg-read.ts"), env);
    const { userId, sessionId } = await callFunction(ours.url, "mutation", "bench:createSession", {});
    token = await sign(userId, sessionId);
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
    /**
     * The statements of the first transaction `application` opened after byte `from` of the log
     * (its BEGIN to its COMMIT), once it is all there.
     */
    const transaction = (application: string, from: number) =>
      eventually(() => {
        const lines = readFileSync(log)
          .subarray(from)
          .toString("utf8")
          .split("\n")
          .filter((line) => line.startsWith(`${application}@LOG:`))
          // "statement: <text>" for simple queries, "execute <name>: <text>" for prepared ones.
          .map((line) => line.replace(/^[^@]*@LOG:\s+(statement|execute [^:]+):\s/, ""));
        const begin = lines.findIndex((line) => line.startsWith("BEGIN"));
        const commit = lines.indexOf("COMMIT", begin);
        if (begin < 0 || commit < 0)
          throw new Error(`no whole transaction from ${application} yet: ${lines}`);
        return lines.slice(begin, commit + 1);
      });
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
