/**
 * Atomic sign-up (issue 9 item 5): the server is SIGKILLed in the middle of an email sign-up —
 * after the user insert, before the account insert — and afterwards the database holds no user
 * without an account. Through the HTTP adapter the sign-up is one write transaction
 * (`ctx.runInTransaction`), so the kill loses the whole of it.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../helpers/browser.ts";
import { PASSWORD } from "../helpers/example-app.ts";
import { PROCESS_TEST_TIMEOUT, ROOT, type SpawnedServer, spawnServer } from "../helpers/process.ts";
import { startTestService, type TestService } from "../helpers/service.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";
import { fixtureApp } from "./fixtures/auth-app.ts";

const SERVER = join(ROOT, "test/auth/fixtures/signup-crash-server.ts");

const running: (SpawnedServer | TestService)[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await ("kill" in s ? s.kill() : s.close());
});

const signUp = (url: string, email: string) =>
  fetch(`${url}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: url },
    body: JSON.stringify({ email, password: PASSWORD, name: "Crash" }),
  });

describe("sign-up killed between the user and the account insert", { timeout: PROCESS_TEST_TIMEOUT }, () => {
  it("leaves no user without an account, and the same email signs up afterwards", async () => {
    const databaseFile = tempDatabaseFile();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const env = { DATABASE_URL: databaseFile, PORT: String(port), SITE_URL: url };
    const server = await spawnServer(SERVER, env);
    running.push(server);

    // A completed sign-up first: the crash must not take committed work with it.
    const before = await signUp(url, "kept@example.com");
    expect(before.status).toBe(200);

    const inserted = new Promise<void>((resolve) => {
      let out = "";
      server.child.stdout!.on("data", (d) => {
        out += d;
        if (out.includes("user inserted")) resolve();
      });
    });
    const crashing = signUp(url, "crash-me@example.com").then(
      () => "answered",
      () => "connection lost",
    );
    await inserted;
    await server.kill("SIGKILL");
    running.splice(running.indexOf(server), 1);
    expect(await crashing).toBe("connection lost");

    // The same database and port, opened again (without the blocking hook).
    const service = await startTestService({
      ...fixtureApp(),
      port,
      databaseUrl: databaseFile,
      envDefaults: { SITE_URL: url },
    });
    running.push(service);
    const rows = async () => ({
      users: await service.backend.read((db) => db.query("user").collect()),
      accounts: await service.backend.read((db) => db.query("account").collect()),
    });
    const afterCrash = await rows();
    expect(afterCrash.users.map((u) => u.email)).toEqual(["kept@example.com"]);
    expect(afterCrash.accounts.map((a) => a.userId)).toEqual([afterCrash.users[0]._id]);

    // Nothing half-done is left to block the email: it signs up now, with its account.
    expect((await signUp(url, "crash-me@example.com")).status).toBe(200);
    const { users, accounts } = await rows();
    expect(users.map((u) => u.email).sort()).toEqual(["crash-me@example.com", "kept@example.com"]);
    for (const user of users) expect(accounts.filter((a) => a.userId === user._id)).toHaveLength(1);
  });
});
