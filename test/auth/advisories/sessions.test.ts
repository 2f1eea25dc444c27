/**
 * GHSA-2vg6-77g8-24mp: admin `remove-user` (and the anonymous plugin's delete) call `deleteUser`,
 * which on 1.4.9 leaves sessions kept in `secondaryStorage` alone: the removed user's cookie goes
 * on working. Mitigated: deleting a user deletes their sessions first, in every store. A JWT for
 * such a session is refused at once either way (step 2 reads the session and the user).
 */
import { admin, anonymous } from "better-auth/plugins";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADVISORY } from "../../../src/auth/advisories/catalog.ts";
import { type AdvisoryFixture, itOnPinnedLine, PASSWORD, startAdvisoryFixture } from "./fixture.ts";

let app: AdvisoryFixture;
let administrator: ReturnType<AdvisoryFixture["browser"]>;
let n = 0;
/** Secondary storage in memory; expiry is irrelevant within a test. */
const store = new Map<string, string>();

beforeAll(async () => {
  app = await startAdvisoryFixture({
    plugins: () => [admin(), anonymous()],
    options: {
      secondaryStorage: {
        get: (key) => store.get(key) ?? null,
        set: (key, value) => void store.set(key, value),
        delete: (key) => void store.delete(key),
      },
      // The backend's step 2 reads sessions from the database, so they are kept there as well.
      session: { storeSessionInDatabase: true },
    },
  });
  const { response } = await app.signUp("admin@example.com");
  await app.service.backend.write((db: any) => db.patch(response.body.user.id, { role: "admin" }));
  administrator = app.browser();
  const signedIn = await administrator.send("POST", "/api/auth/sign-in/email", {
    email: "admin@example.com",
    password: PASSWORD,
  });
  expect(signedIn.status).toBe(200);
});
afterAll(async () => {
  await app?.close();
});

/** A user signed in with a cookie and a JWT, removed by the admin. */
async function removedUser() {
  const { browser, response } = await app.signUp(`removed${++n}@example.com`);
  const userId = response.body.user.id as string;
  const jwt = browser.jar.get("service-auth.jwt");
  expect((await browser.send("GET", "/api/auth/get-session")).body?.user?.id).toBe(userId);
  const removed = await administrator.send("POST", "/api/auth/admin/remove-user", { userId });
  expect(removed.status).toBe(200);
  expect((await app.rows("user")).some((u) => u._id === userId)).toBe(false);
  return { browser, userId, jwt };
}

describe(`sessions end with their user (${ADVISORY.sessionsAfterUserDelete})`, () => {
  itOnPinnedLine(
    "reproduction: with the mitigation off, the removed user's cookie session still answers",
    async () => {
      await app.accept(ADVISORY.sessionsAfterUserDelete);
      try {
        const { browser, userId, jwt } = await removedUser();
        expect((await browser.send("GET", "/api/auth/get-session")).body?.user?.id).toBe(userId);
        expect((await app.whoami(jwt)).body.value).not.toBe(userId);
      } finally {
        await app.accept();
      }
    },
  );

  it("admin remove-user ends the user's sessions, secondary storage included", async () => {
    const { browser, userId, jwt } = await removedUser();
    expect((await browser.send("GET", "/api/auth/get-session")).body).toBeNull();
    expect([...store.values()].some((value) => value.includes(userId))).toBe(false);
    expect((await app.rows("session")).some((s) => s.userId === userId)).toBe(false);
    expect((await app.whoami(jwt)).body.value).not.toBe(userId);
  });
});

describe(`anonymous sessions end when the anonymous user is linked (${ADVISORY.sessionsAfterUserDelete})`, () => {
  /** An anonymous visitor who signs up: the anonymous user is deleted; returns its old session cookie. */
  async function linkedAnonymous() {
    const visitor = app.browser();
    const anon = await visitor.send("POST", "/api/auth/sign-in/anonymous", {});
    expect(anon.status).toBe(200);
    const anonymousCookie = visitor.jar.get("service-auth.session_token")!;
    const anonymousId = (await visitor.send("GET", "/api/auth/get-session")).body.user.id as string;
    const signUp = await visitor.send("POST", "/api/auth/sign-up/email", {
      email: `linked-anon${++n}@example.com`,
      password: PASSWORD,
      name: "Linked",
    });
    expect(signUp.status).toBe(200);
    expect((await app.rows("user")).some((u) => u._id === anonymousId)).toBe(false);
    const old = app.browser();
    old.jar.cookies.set("service-auth.session_token", anonymousCookie);
    return { old, anonymousId };
  }

  itOnPinnedLine(
    "reproduction: with the mitigation off, the deleted anonymous user's session still answers",
    async () => {
      await app.accept(ADVISORY.sessionsAfterUserDelete);
      try {
        const { old, anonymousId } = await linkedAnonymous();
        expect((await old.send("GET", "/api/auth/get-session")).body?.user?.id).toBe(anonymousId);
      } finally {
        await app.accept();
      }
    },
  );

  it("mitigated: the anonymous session ends with its user", async () => {
    const { old } = await linkedAnonymous();
    expect((await old.send("GET", "/api/auth/get-session")).body).toBeNull();
  });
});
