/**
 * A sign-up's password is hashed before its database transaction, not inside it: Better Auth
 * hashes inside the sign-up's transaction, which through the platform's adapter is the database's
 * write lock, so every other write of the service waited for the whole scrypt.
 */

import Database from "@service-auth/better-sqlite3";
import { betterAuth } from "better-auth";
import { memoryAdapter } from "better-auth/adapters/memory";
import { withAuthDefaults } from "service-auth/auth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword, verifyPassword } from "../../src/auth/password.ts";
import { PASSWORD } from "../helpers/example-app.ts";
import { startTestService, type TestService } from "../helpers/service.ts";
import { fixtureApp } from "./fixtures/auth-app.ts";

/** Per hash call: was SQLite's write lock free (another connection could `BEGIN IMMEDIATE`)? */
const lockFreeAtHash: boolean[] = [];
let probe: Database.Database | undefined;

function writeLockFree(): boolean {
  if (!probe) throw new Error("the probe connection is not open");
  try {
    probe.exec("BEGIN IMMEDIATE");
    probe.exec("ROLLBACK");
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === "SQLITE_BUSY") return false;
    throw error;
  }
}

let service: TestService;
beforeAll(async () => {
  service = await startTestService({
    ...fixtureApp({
      withDefaults: true,
      password: {
        hash: async (password) => {
          lockFreeAtHash.push(writeLockFree());
          return hashPassword(password);
        },
        verify: verifyPassword,
      },
    }),
    envDefaults: { SITE_URL: "http://127.0.0.1" },
  });
  probe = new Database(service.databaseFile, { timeout: 0 });
});
afterAll(async () => {
  probe?.close();
  await service?.close();
});

const post = (path: string, body: object) =>
  fetch(`${service.url}/api/auth${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: "http://127.0.0.1" },
    body: JSON.stringify(body),
  });

describe("sign-up password hashing", () => {
  it("happens while the write lock is free, and the stored hash signs the user in", async () => {
    lockFreeAtHash.length = 0;
    const res = await post("/sign-up/email", { email: "prehash@example.com", password: PASSWORD, name: "P" });
    expect(res.status).toBe(200);
    // One hash per sign-up (ahead of the transaction; the endpoint took it), with the lock free.
    expect(lockFreeAtHash).toEqual([true]);
    expect((await post("/sign-in/email", { email: "prehash@example.com", password: PASSWORD })).status).toBe(
      200,
    );
    expect(
      (await post("/sign-in/email", { email: "prehash@example.com", password: `${PASSWORD}!` })).status,
    ).toBe(401);
  });

  it("concurrent sign-ups with one password each store a hash with their own salt", async () => {
    const emails = ["same-1@example.com", "same-2@example.com", "same-3@example.com"];
    const statuses = await Promise.all(
      emails.map((email) =>
        post("/sign-up/email", { email, password: PASSWORD, name: "S" }).then((r) => r.status),
      ),
    );
    expect(statuses).toEqual([200, 200, 200]);
    const accounts = await service.backend.read((db) => db.query("account").collect());
    const hashes = accounts.filter((a) => a.providerId === "credential").map((a) => a.password as string);
    expect(new Set(hashes.map((h) => h.split(":")[0])).size).toBe(hashes.length);
    for (const email of emails)
      expect((await post("/sign-in/email", { email, password: PASSWORD })).status).toBe(200);
  });

  it("one auth instance for many requests: a refused sign-up leaves no ready hash behind", async () => {
    // The platform makes an auth per request; an app may make one for all, whose ready hashes outlive requests.
    let hashed = 0;
    const auth = betterAuth(
      withAuthDefaults({
        baseURL: "http://localhost:3999",
        secret: "prehash-test-secret-prehash-test-secret-01",
        database: memoryAdapter({ user: [], session: [], account: [], verification: [] }),
        emailAndPassword: {
          enabled: true,
          password: {
            hash: (password: string) => {
              hashed++;
              return hashPassword(password);
            },
            verify: verifyPassword,
          },
        },
        rateLimit: { enabled: false },
        telemetry: { enabled: false },
        logger: { disabled: true },
      }),
    );
    await auth.api.signUpEmail({ body: { email: "one@example.com", password: PASSWORD, name: "One" } });
    expect(hashed).toBe(1);
    const reused = "another-pw-1";
    await expect(
      auth.api.signUpEmail({ body: { email: "one@example.com", password: reused, name: "One" } }),
    ).rejects.toMatchObject({ statusCode: 422 });
    expect(hashed).toBe(2); // hashed ahead, then refused
    // A ready hash kept from the refused request would be handed out here without hashing.
    const { password } = await auth.$context;
    await password.hash(reused);
    expect(hashed).toBe(3);
  });
});
