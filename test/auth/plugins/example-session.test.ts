/**
 * The example's `users:session` (query) and `users:sessionFromAction` (action): both return the
 * caller's session document read from the database — so the active organization is the current
 * one even with a token issued before it changed — or UNAUTHORIZED without a session.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExampleApp, startExampleApp } from "../../helpers/example-app.ts";

let app: ExampleApp;
beforeAll(async () => {
  app = await startExampleApp();
});
afterAll(() => app.close());

describe("users:session and users:sessionFromAction", () => {
  it("answer UNAUTHORIZED without a session", async () => {
    const query = await app.call("query", "users:session", {});
    const action = await app.call("action", "users:sessionFromAction", {});
    for (const res of [query, action]) {
      expect(res.status).toBe(401);
      expect(res.body.code).toBe("UNAUTHORIZED");
    }
  });

  it("return the session document with the active organization as it is now", async () => {
    const { browser, token, userId } = await app.signUp("org-owner@example.com");
    const both = async () => {
      const query = await app.call("query", "users:session", {}, token);
      const action = await app.call("action", "users:sessionFromAction", {}, token);
      expect(query.status).toBe(200);
      expect(action.status).toBe(200);
      expect(action.body.value).toEqual(query.body.value);
      return query.body.value as { _id: string; userId: string; activeOrganizationId: string | null };
    };
    const initial = await both();
    expect(initial).toMatchObject({ userId, activeOrganizationId: null });

    const acme = await browser.post("/api/auth/organization/create", { name: "Acme", slug: "acme" });
    expect(acme.status).toBe(200);
    // The token was issued before the organization existed; the document is read now.
    expect(await both()).toMatchObject({ _id: initial._id, activeOrganizationId: acme.body.id });

    const beta = await browser.post("/api/auth/organization/create", { name: "Beta", slug: "beta" });
    expect((await both()).activeOrganizationId).toBe(beta.body.id);
    const switched = await browser.post("/api/auth/organization/set-active", {
      organizationId: acme.body.id,
    });
    expect(switched.status).toBe(200);
    expect((await both()).activeOrganizationId).toBe(acme.body.id);
  });
});
