/**
 * Signing keys have one truth (issue 46, item 8): `auth:rotateKeys` alone (the CLI's `run`, no
 * `| env set JWKS`), the console's rotations and the scheduled retirement change what the server
 * signs with, what the console calls "signing" and the served key set together, whatever order
 * they run in — also after `JWKS` was set by hand to a set the table no longer has.
 *
 * Each case failed before: the rotation changed the table only, so the server kept signing with
 * the old key, the console named the table's key, the retirement left the variable's keys alone,
 * and a later graceful rotation from the console replaced the variable by the table's keys,
 * cutting every token in circulation.
 */
import { decodeProtectedHeader } from "jose";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AdminKeyRow } from "../../../src/auth/admin/functions.ts";
import { type ExampleApp, startExampleApp } from "../../helpers/example-app.ts";
import { getJson } from "../../helpers/http.ts";

const internal = { allowInternal: true };
const kidOf = (token: string) => decodeProtectedHeader(token).kid as string;

let app: ExampleApp;
let admin: Awaited<ReturnType<ExampleApp["signUp"]>>;
let user: Awaited<ReturnType<ExampleApp["signUp"]>>;

beforeEach(async () => {
  app = await startExampleApp();
  admin = await app.signUp("keys-admin@example.com");
  await app.makeAdmin("keys-admin@example.com");
  user = await app.signUp("keys-user@example.com");
});
afterEach(() => app.close());

/** A fresh token for the user: signed with the key the server signs with now. */
async function freshToken(who = user): Promise<string> {
  const res = await who.browser.token();
  expect(res.status).toBe(200);
  return res.body.token!;
}

/** The console's key list (`admin:keys`), as the administrator sees it. */
async function consoleKeys(): Promise<AdminKeyRow[]> {
  const res = await app.call("query", "admin:keys", {}, await freshToken(admin));
  expect(res.status).toBe(200);
  return res.body.value;
}

const signingKid = async () => (await consoleKeys()).filter((k) => k.state === "signing").map((k) => k.kid);
const accepted = async (token: string) => (await app.call("query", "users:me", {}, token)).status;
const served = async () =>
  ((await getJson(`${app.url}/api/auth/backend/jwks`)).body.keys as { kid: string }[])
    .map((k) => k.kid)
    .sort();
const variableKids = () =>
  (JSON.parse(app.backend.env.get("JWKS")!) as { id: string }[]).map((k) => k.id).sort();
const tableKids = async () =>
  (await app.backend.read((db) => db.query("jwks").collect())).map((r) => r._id as string).sort();

describe("one truth for the signing key", () => {
  it("auth:rotateKeys alone: the server signs with the new key, the console says so, old tokens are cut", async () => {
    const old = user.token;
    const value = await app.backend.runAction("auth:rotateKeys", {}, internal);
    // Stored by the rotation itself: the answer is what the servers now read.
    expect(app.backend.env.get("JWKS")).toBe(value);
    expect(variableKids()).toEqual(await tableKids());
    const token = await freshToken();
    expect(kidOf(token)).not.toBe(kidOf(old));
    expect(await signingKid()).toEqual([kidOf(token)]);
    expect(await served()).toEqual([kidOf(token)]);
    expect(await accepted(token)).toBe(200);
    expect(await accepted(old)).toBe(401); // a hard rotation cuts
  });

  it("a graceful rotation alone, then the retirement: the key that signs is never the one removed", async () => {
    const old = user.token;
    await app.backend.runAction("auth:rotateKeys", { overlap: true }, internal);
    const token = await freshToken();
    expect(kidOf(token)).not.toBe(kidOf(old));
    const keys = await consoleKeys();
    expect(keys.find((k) => k.state === "signing")?.kid).toBe(kidOf(token));
    expect(keys.find((k) => k.kid === kidOf(old))?.state).toBe("retiring");
    expect(await served()).toEqual([kidOf(old), kidOf(token)].sort());
    expect(await accepted(old)).toBe(200); // graceful: the old key still verifies

    // The overlap ends (as the clock would make it): the table says the old key has expired.
    await app.backend.write(async (db) => {
      const row = await db.get(kidOf(old) as never);
      await db.patch((row as { _id: never })._id, { expiresAt: Date.now() - 1000 } as never);
    });
    await app.backend.runAction("auth:retireKeys", {}, internal);
    expect(await tableKids()).toEqual([kidOf(token)]);
    expect(variableKids()).toEqual([kidOf(token)]);
    expect(await signingKid()).toEqual([kidOf(token)]);
    expect(await served()).toEqual([kidOf(token)]);
    const after = await freshToken();
    expect(kidOf(after)).toBe(kidOf(token));
    expect(await accepted(after)).toBe(200);
  });

  it("a CLI hard rotation, then 'Rotate gracefully' in the console: tokens of the key in use keep working", async () => {
    await app.backend.runAction("auth:rotateKeys", {}, internal);
    const current = await freshToken();
    const res = await fetch(`${app.url}/admin/api/rotate-keys-gracefully`, {
      method: "POST",
      headers: { authorization: `Bearer ${await freshToken(admin)}` },
    });
    expect(res.status).toBe(200);
    expect(await accepted(current)).toBe(200);
    const next = await freshToken();
    expect(kidOf(next)).not.toBe(kidOf(current));
    expect(await signingKid()).toEqual([kidOf(next)]);
    expect(variableKids()).toEqual(await tableKids());
  });

  it("JWKS set by hand to keys the table lacks: the console names the key in use, a graceful rotation keeps its tokens", async () => {
    const before = app.backend.env.get("JWKS")!;
    const old = user.token;
    await app.backend.runAction("auth:rotateKeys", {}, internal);
    // `env set JWKS` with an older output: the servers sign with its key again.
    await app.backend.env.set("JWKS", before);
    const again = await freshToken();
    expect(kidOf(again)).toBe(kidOf(old));
    expect(await signingKid()).toEqual([kidOf(old)]);

    await app.backend.runAction("auth:rotateKeys", { overlap: true }, internal);
    expect(await accepted(old)).toBe(200);
    const next = await freshToken();
    expect(kidOf(next)).not.toBe(kidOf(old));
    const keys = await consoleKeys();
    expect(keys.find((k) => k.state === "signing")?.kid).toBe(kidOf(next));
    expect(keys.find((k) => k.kid === kidOf(old))?.state).toBe("retiring");
    expect(await served()).toContain(kidOf(old));
  });

  it("refuses to rotate while the process environment sets JWKS (no command could change it)", async () => {
    const value = app.backend.env.get("JWKS")!;
    const table = await tableKids();
    process.env.JWKS = value;
    try {
      await expect(app.backend.runAction("auth:rotateKeys", {}, internal)).rejects.toMatchObject({
        code: "BAD_REQUEST",
        message: expect.stringContaining("JWKS is set in this process's environment"),
      });
    } finally {
      delete process.env.JWKS;
    }
    expect(await tableKids()).toEqual(table);
    expect(app.backend.env.get("JWKS")).toBe(value);
  });
});
