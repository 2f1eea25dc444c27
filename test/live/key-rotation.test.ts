/**
 * Key rotation on live connections (issue 4, item 7): after `auth:rotateKeys` and the new `JWKS`,
 * every connected client gets an auth error, refreshes through the token endpoint with its
 * still-valid session, re-authenticates and keeps receiving updates — nobody signs in again.
 */
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { api, internal } from "../../examples/app/app.ts";
import { type ExampleApp, startExampleApp } from "../helpers/example-app.ts";
import { closeClients, liveClient, watch } from "../helpers/live-client.ts";
import { eventually } from "../helpers/wait.ts";

let app: ExampleApp;

beforeAll(async () => {
  app = await startExampleApp();
});
afterEach(() => closeClients());
afterAll(() => app?.close());

it("connected clients re-authenticate with their session after rotateKeys and keep receiving updates", async () => {
  const users = [await app.signUp("rot-a@example.com"), await app.signUp("rot-b@example.com")];
  const sessionCookies = users.map((u) => u.browser.jar.get("service-auth.session_token"));
  const clients = users.map((u) => liveClient(app.url, u.browser));
  const lists = clients.map((c) => watch(c.client, api.messages.list));
  await eventually(() => expect(lists.map((l) => l.values.length)).toEqual([1, 1]));
  const oldJwks = app.backend.env.get("JWKS");

  const jwks = await app.backend.runAction(internal.auth.rotateKeys, {}, { allowInternal: true });
  expect(typeof jwks).toBe("string");
  await app.backend.env.set("JWKS", jwks as string);
  expect(app.backend.env.get("JWKS")).not.toBe(oldJwks);

  for (const c of clients) {
    await eventually(() =>
      expect(c.received.filter((m) => m.type === "auth_error")).toMatchObject([{ code: "UNAUTHORIZED" }]),
    );
    await eventually(() =>
      expect(c.received.filter((m) => m.type === "authenticated")).toMatchObject([{ authenticated: true }]),
    );
    // One refresh with the session cookie; never reported signed out.
    expect(c.tokenStatuses).toEqual([200, 200]);
    expect(c.authChanges).toEqual([true]);
    expect(c.client.isAuthenticated).toBe(true);
  }
  // Same sessions (no new sign-in); the tokens signed before the rotation are refused, the new ones accepted.
  expect(users.map((u) => u.browser.jar.get("service-auth.session_token"))).toEqual(sessionCookies);
  expect((await app.call("query", "users:me", {}, users[0].token)).status).toBe(401);
  const fresh = users[0].browser.jar.get("service-auth.jwt");
  expect(fresh).not.toBe(users[0].token);
  expect((await app.call("query", "users:me", {}, fresh)).body.value).toMatchObject({ _id: users[0].userId });

  // Updates keep flowing between the two re-authenticated clients.
  await clients[0].client.mutation(api.messages.send, { body: "after rotation" });
  for (const l of lists)
    await eventually(() => expect(l.last().map((m: any) => m.body)).toContain("after rotation"));
  for (const l of lists) expect(l.errors).toEqual([]);
});
