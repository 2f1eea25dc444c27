/**
 * `cli backup` / `cli restore` on SQLite against real processes: a backup taken while a server
 * commits mutations holds every write acknowledged before the backup began (including those
 * still in the WAL), restores into a fresh file, and is private (0600); restore refuses to
 * overwrite without --force and refuses while a server has the database open.
 */
import { copyFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { backupSqlite } from "../../src/backend/storage/sqlite/backup.ts";
import { app } from "../fixtures/app.ts";
import { postJson } from "../helpers/http.ts";
import { runCli, type SpawnedServer, spawnServer } from "../helpers/process.ts";
import { startTestBackend } from "../helpers/service.ts";
import { tempDatabaseFile, tempDir } from "../helpers/temp.ts";

const FIXTURE_SERVER = "test/fixtures/server.ts";
const FIXTURE_APP = "test/fixtures/app.ts";

let server: SpawnedServer | undefined;
afterEach(async () => {
  await server?.kill();
  server = undefined;
});

/** Every message id in the database at `file`, read through the CLI (which also migrates it). */
async function messageIds(file: string): Promise<Set<string>> {
  const result = await runCli(["run", "messages:list"], {
    env: { DATABASE_URL: file, SERVICE_APP: FIXTURE_APP },
  });
  expect(result.code, result.stderr).toBe(0);
  return new Set((JSON.parse(result.stdout) as { _id: string }[]).map((m) => m._id));
}

describe("cli backup under write load", () => {
  it("contains every write acknowledged before the backup began, and restores into a fresh file", async () => {
    const database = tempDatabaseFile();
    server = await spawnServer(FIXTURE_SERVER, { DATABASE_URL: database });
    const url = `${server.url}/api/mutation`;
    const acknowledged: string[] = [];
    let writing = true;
    let failures = 0;
    const writer = async (w: number) => {
      for (let i = 0; writing; i++) {
        const res = await postJson(url, {
          path: "messages:send",
          args: { body: `w${w}-${i}`, author: "load" },
        });
        if (res.status === 200) acknowledged.push((res.body as { value: string }).value);
        else failures++;
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    // Enough acknowledged writes that some are surely still in the WAL only.
    while (acknowledged.length < 200) await new Promise((done) => setImmediate(done));

    const backup = join(tempDir(), "backup.sqlite");
    const before = [...acknowledged];
    const result = await runCli(["backup", backup], { env: { DATABASE_URL: database } });
    const duringOrAfter = acknowledged.length;
    writing = false;
    await Promise.all(writers);
    expect(result.code, result.stderr).toBe(0);
    expect(failures).toBe(0);
    // The server kept committing while the backup ran.
    expect(acknowledged.length).toBeGreaterThan(before.length);
    expect(duringOrAfter).toBeGreaterThan(before.length);
    expect(statSync(backup).mode & 0o777).toBe(0o600);

    const fresh = tempDatabaseFile("restored.sqlite");
    const restored = await runCli(["restore", backup], { env: { DATABASE_URL: fresh } });
    expect(restored.code, restored.stderr).toBe(0);
    const ids = await messageIds(fresh);
    const missing = before.filter((id) => !ids.has(id));
    expect(missing).toEqual([]);
    // Every write the backup holds was acknowledged (the writers awaited every answer).
    const known = new Set(acknowledged);
    expect([...ids].filter((id) => !known.has(id))).toEqual([]);
  }, 120_000);
});

describe("backupSqlite", () => {
  it("copies commits that are still only in the WAL, which a file copy loses", async () => {
    const backend = await startTestBackend(app);
    try {
      // Few small commits: far below the 1000-page auto-checkpoint, so they stay in the WAL.
      for (let i = 0; i < 20; i++) await backend.runMutation("messages:send", { body: `m${i}` }, {});
      const dir = tempDir();
      const copied = join(dir, "copied.sqlite");
      copyFileSync(backend.databaseFile, copied);
      const backup = join(dir, "backup.sqlite");
      backupSqlite(backend.databaseFile, backup);
      expect((await messageIds(copied)).size).toBe(0);
      expect((await messageIds(backup)).size).toBe(20);
    } finally {
      await backend.close();
    }
  }, 30_000);
});

describe("cli restore", () => {
  it("refuses to overwrite without --force, and while a server has the database open", async () => {
    const database = tempDatabaseFile();
    const env = { DATABASE_URL: database, SERVICE_APP: FIXTURE_APP };
    expect((await runCli(["run", "messages:send", '{"body":"kept"}'], { env })).code).toBe(0);
    const backup = join(tempDir(), "backup.sqlite");
    expect((await runCli(["backup", backup], { env })).code).toBe(0);
    const again = await runCli(["backup", backup], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/exists; add --force/);
    expect((await runCli(["run", "messages:send", '{"body":"after the backup"}'], { env })).code).toBe(0);

    const noForce = await runCli(["restore", backup], { env });
    expect(noForce.code).toBe(1);
    expect(noForce.stderr).toMatch(/exists; restoring replaces it: add --force/);

    server = await spawnServer(FIXTURE_SERVER, { DATABASE_URL: database });
    const busy = await runCli(["restore", backup, "--force"], { env });
    expect(busy.code).toBe(1);
    expect(busy.stderr).toMatch(/open in another process/);
    await server.kill("SIGTERM");
    expect(server.child.exitCode).toBe(0);

    const forced = await runCli(["restore", backup, "--force"], { env });
    expect(forced.code, forced.stderr).toBe(0);
    const bodies = JSON.parse((await runCli(["run", "messages:list"], { env })).stdout).map(
      (m: { body: string }) => m.body,
    );
    expect(bodies).toEqual(["kept"]);
  }, 60_000);

  it("refuses a file that is not a Service Auth database", async () => {
    const notDb = join(tempDir(), "notes.txt");
    writeFileSync(notDb, "not a database");
    const result = await runCli(["restore", notDb], { env: { DATABASE_URL: tempDatabaseFile() } });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/refused: .*not a .*database/);
  });
});
