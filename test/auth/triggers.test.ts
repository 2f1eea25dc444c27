/**
 * User triggers end to end (requirements §6): on the example app, sign-up runs `beforeCreate` (username),
 * `onCreate` (profile) and the application trigger of the `internalMutation` wrapper (user count);
 * on the fixture app, a throwing trigger aborts the sign-up and leaves nothing behind.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuthFixture, startAuthFixture } from "../helpers/auth-fixture.ts";
import { type ExampleApp, startExampleApp } from "../helpers/example-app.ts";
import { FAIL_BEFORE_CREATE, FAIL_ON_CREATE } from "./fixtures/auth-app.ts";

describe("example app triggers on sign-up", () => {
  let app: ExampleApp;
  beforeAll(async () => {
    app = await startExampleApp();
  });
  afterAll(async () => {
    await app.close();
  });

  const count = async () => (await app.call("query", "users:count")).body.value as number;

  it("beforeCreate fills username (unique suffix for a taken one), onCreate makes a profile, the count follows", async () => {
    const before = await count();
    const first = await app.signUp("Sam.Smith@one.example");
    const second = await app.signUp("sam.smith@two.example");
    const third = await app.signUp("samsmith@three.example");

    const me = async (token: string) => (await app.call("query", "users:me", {}, token)).body.value;
    expect((await me(first.token)).username).toBe("samsmith");
    expect((await me(second.token)).username).toBe("samsmith1");
    expect((await me(third.token)).username).toBe("samsmith2");

    for (const user of [first, second, third]) {
      const profile = await app.call("query", "profiles:mine", {}, user.token);
      expect(profile.status).toBe(200);
      expect(profile.body.value).toMatchObject({ userId: user.userId, bio: "" });
    }
    expect(await count()).toBe(before + 3);
    const users = await app.backend.read((db) => db.query("user").collect());
    expect(users).toHaveLength(before + 3);
  });

  it("a refused sign-up (duplicate email) changes neither users, profiles nor the count", async () => {
    await app.signUp("dupe@example.com");
    const before = await count();
    const profiles = (await app.backend.read((db) => db.query("profiles").collect())).length;
    const res = await app.browser().post("/api/auth/sign-up/email", {
      email: "dupe@example.com",
      password: "correct horse battery",
      name: "x",
    });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL");
    expect(await count()).toBe(before);
    expect((await app.backend.read((db) => db.query("profiles").collect())).length).toBe(profiles);
  });

  it("removing a user through Better Auth runs the application trigger (count goes down)", async () => {
    const admin = await app.signUp("trigger-admin@example.com");
    await app.makeAdmin("trigger-admin@example.com");
    const leaver = await app.signUp("leaver@example.com");
    const before = await count();
    const res = await admin.browser.post("/api/auth/admin/remove-user", { userId: leaver.userId });
    expect(res.status).toBe(200);
    expect(await app.backend.read((db) => db.get("user", leaver.userId))).toBeNull();
    expect(await count()).toBe(before - 1);
    // onDelete removed the profile in the same transaction.
    const profile = await app.backend.read((db) =>
      db
        .query("profiles")
        .withIndex("userId", (q) => q.eq("userId", leaver.userId as any))
        .first(),
    );
    expect(profile).toBeNull();
  });
});

describe("a throwing trigger aborts the sign-up", () => {
  let fixture: AuthFixture;
  beforeAll(async () => {
    fixture = await startAuthFixture();
  });
  afterAll(async () => {
    await fixture.close();
  });

  const everything = () =>
    fixture.service.backend.read(async (db) => ({
      user: await db.query("user").collect(),
      session: await db.query("session").collect(),
      account: await db.query("account").collect(),
      profiles: await db.query("profiles").collect(),
    }));

  it("control: a normal sign-up writes user, session, account and profile", async () => {
    const { response, token } = await fixture.signUp("fine@example.com");
    expect(response.status).toBe(200);
    const profile = await fixture.call("query", "probe:profile", {}, token);
    expect(profile.body.value).toMatchObject({ userId: response.body.user.id });
  });

  for (const prefix of [FAIL_BEFORE_CREATE, FAIL_ON_CREATE]) {
    it(`${prefix}: no user, session, account or profile remains`, async () => {
      const before = await everything();
      const email = `${prefix}someone@example.com`;
      const { response, token } = await fixture.signUp(email);
      expect(response.status).toBe(422);
      expect(response.body.code).toBe("FAILED_TO_CREATE_USER");
      expect(token).toBeUndefined();
      expect(response.text).not.toMatch(/\n\s+at /);
      const after = await everything();
      expect(after).toEqual(before);
      expect(after.user.some((u) => u.email === email)).toBe(false);
    });
  }
});
