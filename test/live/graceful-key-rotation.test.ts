/**
 * Key rotation nobody notices (issue 28 item 5): `auth:rotateKeys` with `overlap` makes a new key
 * that signs at once while the old one keeps verifying until the last token it signed expires;
 * a scheduled `auth:retireKeys` then removes it. Under HTTP and WebSocket load with tokens
 * minutes from expiry, the rotation causes no 401 and no `auth_error`; after the overlap a token
 * of the old key is refused with "Invalid token signature".
 *
 * "Minutes from expiry": the process clock is moved 12 minutes on (`vi.useFakeTimers({ toFake:
 * ["Date"] })`, timers stay real) so the example's 900 s tokens have 3 minutes left; server, Better
 * Auth and clients share this process, as in test/live/outcomes-ws.test.ts.
 */
import { afterAll, afterEach, beforeAll, expect, it, vi } from "vitest";
import { api, internal } from "../../examples/app/app.ts";
import { keyStates, parseStoredJwks } from "../../src/auth/keys/stored-jwks.ts";
import { type ExampleApp, startExampleApp } from "../helpers/example-app.ts";
import { closeClients, liveClient, watch } from "../helpers/live-client.ts";
import { eventually } from "../helpers/wait.ts";

let app: ExampleApp;
let n = 0;
const email = () => `graceful${++n}@example.com`;

beforeAll(async () => {
  app = await startExampleApp({ sync: { sweepIntervalMs: 50, idleTimeoutMs: 0 } });
});
afterEach(() => {
  closeClients();
  vi.useRealTimers();
});
afterAll(() => app?.close());

const kidOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[0], "base64url").toString()).kid;

async function rotate(overlap: boolean | number): Promise<string> {
  const jwks = await app.backend.runAction(internal.auth.rotateKeys, { overlap }, { allowInternal: true });
  await app.backend.env.set("JWKS", jwks as string);
  return jwks as string;
}

// First: the tests after it move the clock, and keys made then carry a future `createdAt`.
it("the admin console rotates gracefully and shows the old key retiring until its tokens expire", async () => {
  const adminEmail = email();
  const admin = await app.signUp(adminEmail);
  await app.makeAdmin(adminEmail);
  const user = await app.signUp(email());
  const consoleApi = (path: string, token: string) =>
    fetch(`${app.url}/admin/api/${path}`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
  expect((await consoleApi("rotate-keys-gracefully", user.token)).status).toBe(403);

  const done = await consoleApi("rotate-keys-gracefully", admin.token);
  expect(done.status).toBe(200);
  expect((await done.json()).value).toEqual({ storedJwksUpdated: true });
  const listed = await app.call("query", "admin:keys", {}, admin.token);
  expect(listed.body).toMatchObject({ status: "success" });
  const keys = listed.body.value;
  expect(keys[0]).toMatchObject({ state: "signing" });
  expect(keys[0].expiresAt).toBeUndefined();
  const retiring = keys.find((k: any) => k.kid === kidOf(user.token));
  expect(retiring).toMatchObject({ state: "retiring", expiresAt: expect.any(Number) });
  expect(retiring.expiresAt).toBeGreaterThan(Date.now() + 900_000);
  // Nobody noticed: the tokens of both the administrator and the user still work.
  expect((await app.call("query", "users:me", {}, user.token)).status).toBe(200);
  expect((await app.call("query", "admin:keys", {}, admin.token)).status).toBe(200);
});

it("a graceful rotation under HTTP and WebSocket load: 0 401s, 0 auth_errors, new key signs at once", async () => {
  const users = await Promise.all([1, 2, 3, 4].map(() => app.signUp(email())));
  const clients = users.map((u) => liveClient(app.url, u.browser));
  const lists = clients.map((c) => watch(c.client, api.messages.list));
  await eventually(() => expect(lists.map((l) => l.values.length)).toEqual([1, 1, 1, 1]));
  const oldKid = kidOf(users[0].token);
  vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 12 * 60 * 1000 });

  const httpStatuses: number[] = [];
  const wsErrors: unknown[] = [];
  let rotated = false;
  let afterRotation = 0;
  // Each user hammers HTTP with its old token and the socket with queries and mutations until
  // well after the new key set is live.
  const load = users.map(async (u, i) => {
    while (!rotated || afterRotation < 40) {
      const res = await app.call("query", "users:me", {}, u.token);
      httpStatuses.push(res.status);
      await clients[i].client.query(api.users.me, {}).catch((e) => wsErrors.push(e));
      await clients[i].client
        .mutation(api.messages.send, { body: `load ${i}` })
        .catch((e) => wsErrors.push(e));
      if (rotated) afterRotation++;
    }
  });
  await eventually(() => expect(httpStatuses.length).toBeGreaterThan(8));
  const jwks = await rotate(true);
  rotated = true;
  await Promise.all(load);

  expect(httpStatuses.filter((s) => s !== 200)).toEqual([]);
  expect(wsErrors).toEqual([]);
  for (const c of clients) {
    expect(c.received.filter((m) => m.type === "auth_error")).toEqual([]);
    expect(c.authChanges).toEqual([true]);
  }
  for (const l of lists) expect(l.errors).toEqual([]);

  // Both keys verify; the new one signs every token issued from now on.
  const states = keyStates(jwks);
  const old = states.find((s) => s.id === oldKid)!;
  const signers = states.filter((s) => s.state === "signing");
  expect(old.state).toBe("verifying");
  expect(signers).toHaveLength(1);
  expect(signers[0].id).not.toBe(oldKid);
  // The old key verifies until every token it signed has expired.
  expect(old.expiresAt).toBeGreaterThan(Date.now() + 3 * 60 * 1000);
  const fresh = await users[0].browser.token();
  expect(kidOf(fresh.body.token!)).toBe(signers[0].id);
  expect((await app.call("query", "users:me", {}, fresh.body.token)).body.value).toMatchObject({
    _id: users[0].userId,
  });
  // A client moving to the new token (its refresh) is accepted on the same server, no error.
  const moved = liveClient(app.url, users[1].browser);
  const me = watch(moved.client, api.users.me);
  await eventually(() => expect(me.last()).toMatchObject({ _id: users[1].userId }));
  expect(moved.received.filter((m) => m.type === "auth_error")).toEqual([]);
  expect(kidOf(users[1].browser.jar.get("service-auth.jwt")!)).toBe(signers[0].id);
});

it("after the overlap the old key's token is refused with Invalid token signature and the job removes the key", async () => {
  const user = await app.signUp(email());
  const oldKid = kidOf(user.token);
  const jwks = await rotate(true);
  const retireAt = parseStoredJwks(jwks).find((r) => r.id === oldKid)?.expiresAt;
  // The overlap outlasts the token: lifetime (900 s) and a minute for clock skew.
  const { exp } = JSON.parse(Buffer.from(user.token.split(".")[1], "base64url").toString());
  expect(retireAt).toBeGreaterThanOrEqual((exp + 60) * 1000);
  expect((await app.call("query", "users:me", {}, user.token)).status).toBe(200);

  // Past the overlap (the clock moved, as a long wait would): refused by its key, on every instance
  // by the clock alone, before the scheduled job has even run.
  vi.useFakeTimers({ toFake: ["Date"], now: retireAt! + 1000 });
  const res = await app.call("query", "users:me", {}, user.token);
  expect(res.status).toBe(401);
  expect(res.body.message).toBe("Invalid token signature");
  expect(keyStates(app.backend.env.get("JWKS")!).find((s) => s.id === oldKid)?.state).toBe("retired");
  // The scheduled retirement deletes the old key from the key table: later key sets lack it.
  await eventually(async () => {
    const latest = await app.backend.runAction(internal.auth.getLatestJwks, {}, { allowInternal: true });
    expect(parseStoredJwks(latest as string).map((r) => r.id)).not.toContain(oldKid);
  });
  // The session is untouched: its new token, signed by the new key, works.
  const fresh = await user.browser.token();
  expect(fresh.status).toBe(200);
  expect(kidOf(fresh.body.token!)).not.toBe(oldKid);
  expect((await app.call("query", "users:me", {}, fresh.body.token)).status).toBe(200);
});

it("refuses an overlap shorter than the token lifetime with a clear error", async () => {
  await expect(
    app.backend.runAction(internal.auth.rotateKeys, { overlap: 60 }, { allowInternal: true }),
  ).rejects.toMatchObject({ message: expect.stringContaining("at least the token lifetime (900)") });
});
