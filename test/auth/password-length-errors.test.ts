/**
 * A password outside the length limits is refused with the configured limit in the message
 * (`password-length-errors.ts`, added by `withAuthDefaults`), through Better Auth's HTTP handler:
 * sign-up too short and too long, and a signed-in user's change of password; the status and the
 * `code` stay Better Auth's, and other errors keep their words.
 */
import { betterAuth } from "better-auth";
import { memoryAdapter } from "better-auth/adapters/memory";
import { describe, expect, it } from "vitest";
import { withAuthDefaults } from "../../src/auth/with-auth-defaults.ts";

process.env.LOG_LEVEL ??= "silent";

const URL_BASE = "http://127.0.0.1:3000";

function authWith(limits: { minPasswordLength?: number; maxPasswordLength?: number }) {
  const db: Record<string, unknown[]> = { user: [], session: [], account: [], verification: [] };
  return betterAuth(
    withAuthDefaults({
      baseURL: URL_BASE,
      secret: "password-length-secret-password-length-01",
      database: memoryAdapter(db),
      emailAndPassword: { enabled: true, ...limits },
      rateLimit: { enabled: false },
      telemetry: { enabled: false },
    }),
  );
}

type Auth = ReturnType<typeof authWith>;

async function post(auth: Auth, path: string, body: unknown, cookie = "") {
  const response = await auth.handler(
    new Request(`${URL_BASE}/api/auth${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: URL_BASE, ...(cookie ? { cookie } : {}) },
      body: JSON.stringify(body),
    }),
  );
  return {
    status: response.status,
    body: (await response.json()) as { code?: string; message?: string },
    response,
  };
}

const signUp = (auth: Auth, password: string, email = "ann@example.com") =>
  post(auth, "/sign-up/email", { email, password, name: "Ann" });

describe("password length errors", () => {
  it("a short sign-up password: 400 PASSWORD_TOO_SHORT naming the configured minimum", async () => {
    const res = await signUp(authWith({ minPasswordLength: 12 }), "x".repeat(11));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: "PASSWORD_TOO_SHORT",
      message: "Password too short: use at least 12 characters",
    });
  });

  it("Better Auth's default minimum (8) when the app sets none", async () => {
    const res = await signUp(authWith({}), "short");
    expect(res.body.message).toBe("Password too short: use at least 8 characters");
  });

  it("a long sign-up password: 400 PASSWORD_TOO_LONG naming the configured maximum", async () => {
    const res = await signUp(authWith({ maxPasswordLength: 20 }), "x".repeat(21));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: "PASSWORD_TOO_LONG",
      message: "Password too long: use at most 20 characters",
    });
  });

  it("a password within the limits signs up; a change to a short one names the minimum", async () => {
    const auth = authWith({ minPasswordLength: 10 });
    const ok = await signUp(auth, "long-enough-1");
    expect(ok.status).toBe(200);
    const cookie = ok.response.headers
      .getSetCookie()
      .map((line) => line.split(";")[0])
      .join("; ");
    const res = await post(
      auth,
      "/change-password",
      { currentPassword: "long-enough-1", newPassword: "short" },
      cookie,
    );
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: "PASSWORD_TOO_SHORT",
      message: "Password too short: use at least 10 characters",
    });
  });

  it("leaves other errors as Better Auth words them", async () => {
    const auth = authWith({});
    await signUp(auth, "long-enough-1");
    const again = await signUp(auth, "long-enough-2");
    expect(again.status).toBe(422);
    expect(again.body.message).toBe("User already exists. Use another email.");
  });
});
