/**
 * The floor of `npm run bench -- pg-writes` (bench/fixtures/raw-pg-write.ts) must do the work our
 * PostgreSQL `bench:post` mutation does, no less: for the same request it answers the same shape
 * of bytes as our instance (status, headers but the date, the new id's form), it sends PostgreSQL
 * the same statements in the same order (read from the server's statement log, told apart by
 * application name), and what it stores is what ours stores: the document, both index keys in our
 * encoding, and the commit log row's write set as our encoder writes it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rs256Tokens } from "../../bench/lib/rs256-tokens.ts";
import { type SpawnedServer, spawnServer } from "../../bench/lib/spawn.ts";
import { encodeWrites } from "../../src/backend/storage/commit-log/payload.ts";
import { encodeKey } from "../../src/backend/storage/indexes/key.ts";
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

async function post(url: string, channel: string): Promise<Answer> {
  const response = await fetch(`${url}/api/mutation`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ path: "bench:post", args: { channel, body: `${channel} message` } }),
  });
  const headers = Object.fromEntries(response.headers);
  // The only header whose value may differ between two answers.
  delete headers.date;
  return { status: response.status, body: await response.text(), headers };
}

describe.skipIf(!postgresBinDir)("the PostgreSQL write floor", () => {
  let server: TestPostgres;
  let url: string;
  let ours: SpawnedServer;
  let floor: SpawnedServer;

  beforeAll(async () => {
    // Every statement logged with the application name of its connection in front.
    server = await startPostgres(["log_statement=all", "log_line_prefix=%a@"]);
    url = await server.createDatabase();
    const { jwk } = await rs256Tokens(ISSUER, AUDIENCE);
    const env = { BENCH_JWK: jwk, BENCH_ISSUER: ISSUER, BENCH_AUDIENCE: AUDIENCE, DATABASE_URL: url };
    ours = await spawnServer(fixture("postgres-server.ts"), env);
    // Started after ours migrated the database: the floor writes to our tables.
    floor = await spawnServer(fixture("raw-pg-write.ts"), env);
  }, 120_000);

  afterAll(async () => {
    await floor?.stop();
    await ours?.stop();
    await server?.stop();
  });

  it("answers what our instance answers and stores what ours stores", async () => {
    const [a, b] = [await post(ours.url, "ours"), await post(floor.url, "floor")];
    expect(a.status).toBe(200);
    expect(b.headers).toEqual(a.headers);
    const idOf = (answer: Answer) => JSON.parse(answer.body).value as string;
    const [oursId, floorId] = [idOf(a), idOf(b)];
    expect(oursId).toMatch(/^[a-z2-7]{30}$/);
    expect(floorId).toMatch(/^[a-z2-7]{30}$/);
    // The same table tag at the end; the same body around the id.
    expect(floorId.slice(26)).toBe(oursId.slice(26));
    expect(b.body.replace(floorId, "ID")).toBe(a.body.replace(oursId, "ID"));
    // A request it cannot serve is refused, as ours refuses it.
    const bad = await fetch(`${floor.url}/api/mutation`, { method: "POST", body: "{" });
    expect(bad.status).toBe(400);

    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      for (const [id, channel] of [
        [oursId, "ours"],
        [floorId, "floor"],
      ]) {
        const { rows } = await client.query(
          'SELECT doc, "k_by_creation_time" AS created, "k_by_channel" AS channel FROM "t_messages" WHERE id = $1',
          [id],
        );
        expect(rows).toHaveLength(1);
        const doc = JSON.parse(rows[0].doc);
        expect(Object.keys(doc)).toEqual(["channel", "body", "_id", "_creationTime"]);
        expect(doc).toMatchObject({ channel, body: `${channel} message`, _id: id });
        expect(rows[0].created).toEqual(encodeKey([doc._creationTime, id]));
        expect(rows[0].channel).toEqual(encodeKey([channel, doc._creationTime, id]));
        const log = await client.query('SELECT writes FROM "_commit_log" WHERE writes LIKE $1', [`%${id}%`]);
        expect(log.rows.map((r) => r.writes)).toEqual([
          encodeWrites([{ table: "messages", id, before: null, after: doc }]),
        ]);
      }
    } finally {
      await client.end();
    }
  });

  it("sends PostgreSQL the statements our engine sends for the mutation", async () => {
    const log = join(server.dir, "server.log");
    // The request's transaction, not a background one of the server's: it inserts the posted text.
    const transaction = (application: string, from: number) =>
      loggedTransaction(log, application, from, "statements");
    const measure = async (url: string, application: string) => {
      const from = readFileSync(log).length;
      expect((await post(url, "statements")).status).toBe(200);
      return transaction(application, from);
    };
    const ourStatements = await measure(ours.url, "service-auth");
    expect(ourStatements).toHaveLength(4);
    expect(ourStatements[1]).toMatch(/^INSERT INTO "t_messages"/);
    expect(ourStatements[2]).toMatch(/^INSERT INTO "_commit_log"/);
    expect(await measure(floor.url, "service-auth-floor")).toEqual(ourStatements);
  });
});
