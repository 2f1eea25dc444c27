/**
 * Who may open the admin console and call its functions: administrators only. Signed-out visitors
 * get the sign-in page (401), other users 403 and `FORBIDDEN` from every admin query and console
 * route; the console never hands out env values or session tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExampleApp, startExampleApp } from "../helpers/example-app.ts";

let app: ExampleApp;
let admin: Awaited<ReturnType<ExampleApp["signUp"]>>;
let user: Awaited<ReturnType<ExampleApp["signUp"]>>;

beforeAll(async () => {
  app = await startExampleApp();
  admin = await app.signUp("root@example.com");
  user = await app.signUp("plain@example.com");
  await app.makeAdmin("root@example.com");
});
afterAll(() => app?.close());

const page = (cookie?: string) => fetch(`${app.url}/admin`, { headers: cookie ? { cookie } : {} });

describe("the /admin page", () => {
  it("shows the sign-in form to a visitor without a session (401)", async () => {
    const res = await page();
    expect(res.status).toBe(401);
    const html = await res.text();
    expect(html).toContain('data-view="sign-in"');
    expect(html).toContain('id="sign-in"');
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
  });

  it("refuses a signed-in user who is not an administrator (403)", async () => {
    const res = await page(user.browser.jar.header());
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("Administrators only");
  });

  it("serves the console to an administrator", async () => {
    const res = await page(admin.browser.jar.header());
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('data-view="console"');
  });

  it("decides by the session, not a stale JWT cookie: a signed-out admin gets the sign-in page", async () => {
    const b = app.browser();
    await b.post("/api/auth/sign-in/email", { email: "root@example.com", password: "correct horse battery" });
    const jwtOnly = `service-auth.jwt=${b.jar.get("service-auth.jwt")}`;
    await b.post("/api/auth/sign-out", {});
    expect((await page(jwtOnly)).status).toBe(401);
  });
});

describe("admin functions", () => {
  for (const [path, args] of [
    ["admin:viewer", {}],
    ["admin:users", {}],
    ["admin:keys", {}],
    ["admin:sessions", { userId: "" }],
  ] as const) {
    it(`${path}: FORBIDDEN for a user, UNAUTHORIZED without a token`, async () => {
      const sessionArgs = path === "admin:sessions" ? { userId: admin.userId } : args;
      const asUser = await app.call("query", path, sessionArgs, user.token);
      expect(asUser.status).toBe(403);
      expect(asUser.body).toMatchObject({ status: "error", code: "FORBIDDEN" });
      const anonymous = await app.call("query", path, sessionArgs, null);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toMatchObject({ code: "UNAUTHORIZED" });
    });
  }

  it("lists users with search and paging for an administrator, without secrets", async () => {
    for (const n of [1, 2, 3]) await app.signUp(`paged${n}@example.com`);
    const first = await app.call("query", "admin:users", { search: "PAGED", numItems: 2 }, admin.token);
    expect(first.status).toBe(200);
    expect(first.body.value.page.map((u: any) => u.email)).toEqual([
      "paged3@example.com",
      "paged2@example.com",
    ]);
    expect(first.body.value.isDone).toBe(false);
    const second = await app.call(
      "query",
      "admin:users",
      { search: "paged", numItems: 2, cursor: first.body.value.continueCursor },
      admin.token,
    );
    expect(second.body.value.page.map((u: any) => u.email)).toEqual(["paged1@example.com"]);
    expect(second.body.value.isDone).toBe(true);
    expect(Object.keys(first.body.value.page[0]).sort()).toEqual(
      ["_id", "banExpires", "banReason", "banned", "createdAt", "email", "name", "role"].sort(),
    );
    const tooLong = await app.call("query", "admin:users", { search: "x".repeat(201) }, admin.token);
    expect(tooLong.body).toMatchObject({ code: "BAD_REQUEST" });
  });

  it("lists a user's sessions without their tokens", async () => {
    const res = await app.call("query", "admin:sessions", { userId: user.userId }, admin.token);
    expect(res.body.value).toHaveLength(1);
    expect(res.body.value[0]).not.toHaveProperty("token");
    expect(JSON.stringify(res.body.value)).not.toContain(
      user.browser.jar.get("service-auth.session_token")?.split(".")[0],
    );
  });
});

describe("console routes", () => {
  const consoleApi = (path: string, method: string, token?: string) =>
    fetch(`${app.url}/admin/api/${path}`, {
      method,
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });

  it("env: names for an administrator, never values; FORBIDDEN / UNAUTHORIZED for others", async () => {
    const res = await consoleApi("env", "GET", admin.token);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.value.names).toEqual(expect.arrayContaining(["JWKS", "SERVICE_AUTH_SECRET"]));
    expect(JSON.stringify(body)).not.toContain(app.backend.env.get("SERVICE_AUTH_SECRET"));
    expect((await consoleApi("env", "GET", user.token)).status).toBe(403);
    expect(await (await consoleApi("env", "GET", user.token)).json()).toMatchObject({ code: "FORBIDDEN" });
    expect((await consoleApi("env", "GET")).status).toBe(401);
  });

  it("rotate-keys: refused for a user (keys unchanged), done for an administrator (JWKS stored)", async () => {
    const before = app.backend.env.get("JWKS");
    const refused = await consoleApi("rotate-keys", "POST", user.token);
    expect(refused.status).toBe(403);
    expect(app.backend.env.get("JWKS")).toBe(before);
    const done = await consoleApi("rotate-keys", "POST", admin.token);
    expect(done.status).toBe(200);
    expect((await done.json()).value).toEqual({ storedJwksUpdated: true });
    expect(app.backend.env.get("JWKS")).not.toBe(before);
  });
});
