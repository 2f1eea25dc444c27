/**
 * CSRF on the state-changing auth endpoints, with Better Auth's origin check live (a real
 * `npm start` process, not the test environment where Better Auth skips the check): a POST
 * carrying the session — as a cookie, or through the `Service-Auth-Cookie` header bridge — from
 * another origin is refused and the session survives; from SITE_URL it works.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { CookieJar, PASSWORD } from "../helpers/example-app.ts";
import { type ExampleServer, spawnExampleServer } from "../helpers/example-server.ts";
import { PROCESS_TEST_TIMEOUT } from "../helpers/process.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";

let server: ExampleServer;
beforeAll(async () => {
  server = await spawnExampleServer({
    DATABASE_URL: tempDatabaseFile(),
    TEST: undefined,
    VITEST: undefined,
    LOG_LEVEL: "info",
  } as any);
}, PROCESS_TEST_TIMEOUT);
afterAll(async () => {
  await server?.stop();
});

async function signUp(email: string): Promise<CookieJar> {
  const jar = new CookieJar();
  const res = await fetch(`${server.url}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { origin: server.url, "content-type": "application/json" },
    body: JSON.stringify({ email, password: PASSWORD, name: "csrf" }),
  });
  expect(res.status).toBe(200);
  jar.absorb(res);
  return jar;
}

const signOut = (headers: Record<string, string>) =>
  fetch(`${server.url}/api/auth/sign-out`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: "{}",
  });
const token = (jar: CookieJar) =>
  fetch(`${server.url}/api/auth/backend/token`, { headers: { cookie: jar.header() } });

it("refuses a cross-origin sign-out by cookie and by Service-Auth-Cookie; allows SITE_URL", async () => {
  const jar = await signUp("csrf@example.com");
  expect((await signOut({ origin: "https://evil.example", cookie: jar.header() })).status).toBe(403);
  expect(
    (await signOut({ origin: "https://evil.example", "service-auth-cookie": jar.header() })).status,
  ).toBe(403);
  expect((await token(jar)).status).toBe(200);
  expect((await signOut({ origin: server.url, cookie: jar.header() })).status).toBe(200);
  expect((await token(jar)).status).toBe(401);
});
