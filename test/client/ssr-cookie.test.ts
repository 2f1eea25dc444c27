/**
 * `getRequestToken` (SSR, requirements §1.9) reading the `service-auth.jwt` cookie: a malformed
 * percent-encoding in the cookie must not crash the render, and on https the `__Secure-` cookie
 * (which only a secure response of this host can set) wins over a plain one of the same name,
 * which a sibling subdomain or a plain-http response could have planted.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { getRequestToken } from "../../src/client/server-rendering.ts";
import { type ExampleApp, startExampleApp } from "../helpers/example-app.ts";

let app: ExampleApp;
beforeAll(async () => {
  app = await startExampleApp();
});
afterAll(async () => {
  await app.close();
});

it("a malformed JWT cookie falls back to the token endpoint instead of throwing", async () => {
  const { browser } = await app.signUp("ssr-malformed@example.com");
  const cookie = `${browser.jar.header().replace(/service-auth\.jwt=[^;]*/, "service-auth.jwt=%E0%A4%A")}`;
  expect(cookie).toContain("service-auth.jwt=%E0%A4%A");
  const result = await getRequestToken(new Headers({ cookie }), { url: app.url });
  expect(typeof result.token).toBe("string");
  expect((await app.call("query", "users:me", {}, result.token)).status).toBe(200);
});

it("prefers the __Secure- cookie over a planted plain one", async () => {
  const victim = await app.signUp("ssr-victim@example.com");
  const attacker = await app.signUp("ssr-attacker@example.com");
  const cookie = `service-auth.jwt=${attacker.token}; __Secure-service-auth.jwt=${victim.token}`;
  const result = await getRequestToken(new Headers({ cookie }), { url: app.url });
  expect(result.token).toBe(victim.token);
});
