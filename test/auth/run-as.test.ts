/**
 * `runAsUser` (`src/auth/run-as.ts`, the CLI's `run --as`) in process, against the example app's
 * real Better Auth: the JWT it returns is the user's (steps 1+2 accept it), found by email in any
 * case or by id, through a session that `end()` deletes; an unknown user, or a token endpoint that
 * gives no token, is an error that leaves no session behind. (The CLI itself: test/cli/run-as.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAuth } from "../../examples/app/auth.ts";
import { runAsUser, type SessionMintingAuth } from "../../src/auth/run-as.ts";
import type { ActionCtx } from "../../src/backend/server.ts";
import { type ExampleApp, startExampleApp } from "../helpers/example-app.ts";

let app: ExampleApp;
let userId: string;

beforeAll(async () => {
  app = await startExampleApp();
  userId = (await app.signUp("run-as@example.com")).userId;
});
afterAll(() => app?.close());

const sessionCount = () =>
  app.backend.read(
    async (db) =>
      (
        await db
          .query("session")
          .withIndex("userId", (q) => q.eq("userId", userId))
          .collect()
      ).length,
  );

/** The example app's auth with its token endpoint answered by `answer` (the requests are kept). */
function withTokenEndpoint(answer: (request: Request) => Promise<Response>) {
  const requests: Request[] = [];
  const create = (ctx: ActionCtx): SessionMintingAuth => {
    const auth = createAuth(ctx) as unknown as SessionMintingAuth;
    return {
      $context: auth.$context,
      handler: (request) => {
        requests.push(request);
        return answer(request);
      },
    };
  };
  return { create, requests };
}

describe("runAsUser", () => {
  it("mints a JWT of the user found by email, in any case, and end() deletes its session", async () => {
    const before = await sessionCount();
    const session = await runAsUser(createAuth)(app.backend, "Run-As@Example.COM");
    expect(await sessionCount()).toBe(before + 1);
    const { identity } = await app.backend.authenticate(session.token);
    expect(identity).toMatchObject({ userId, subject: userId });
    await session.end();
    expect(await sessionCount()).toBe(before);
  });

  it("finds the user by id", async () => {
    const session = await runAsUser(createAuth)(app.backend, userId);
    expect((await app.backend.authenticate(session.token)).identity).toMatchObject({ userId });
    await session.end();
  });

  it("works with a SITE_URL that ends in slashes", async () => {
    await app.backend.env.set("SITE_URL", `${app.url}//`);
    try {
      const before = await sessionCount();
      const session = await runAsUser(createAuth)(app.backend, userId);
      expect((await app.backend.authenticate(session.token)).identity).toMatchObject({ userId });
      await session.end();
      expect(await sessionCount()).toBe(before);
    } finally {
      await app.backend.env.remove("SITE_URL");
    }
  });

  it.each([
    ["an unknown email", "nobody@example.com"],
    ["an unknown id", "no-such-user-id"],
  ])("refuses %s by name and makes no session", async (_, who) => {
    const before = await sessionCount();
    await expect(runAsUser(createAuth)(app.backend, who)).rejects.toThrow(new Error(`No user ${who}`));
    expect(await sessionCount()).toBe(before);
  });

  it("asks <SITE_URL><basePath>/backend/token, the default base path being /api/auth", async () => {
    const endpoint = withTokenEndpoint(async () => Response.json({ token: "minted" }));
    const session = await runAsUser(endpoint.create)(app.backend, userId);
    expect(session.token).toBe("minted");
    await runAsUser(endpoint.create, "/auth")(app.backend, userId);
    expect(endpoint.requests.map((r) => r.url)).toEqual([
      `${app.url}/api/auth/backend/token`,
      `${app.url}/auth/backend/token`,
    ]);
    // The session cookie: the session's token, signed, under the auth's cookie name.
    const cookie = endpoint.requests[0].headers.get("cookie")!;
    expect(cookie).toMatch(/^service-auth\.session_token=[^;]+\.[^;]+$/);
  });

  it.each([
    ["a refusal", () => Response.json({ token: "not-to-be-used" }, { status: 401 }), "401"],
    ["an answer without a token", () => Response.json({}), "200"],
    ["an answer that is not JSON", () => new Response("<html>", { status: 200 }), "200"],
    ["an empty token", () => Response.json({ token: "" }), "200"],
  ])(
    "on %s from the token endpoint, throws naming the status and deletes the session",
    async (_, answer, status) => {
      const before = await sessionCount();
      const endpoint = withTokenEndpoint(async () => answer());
      await expect(runAsUser(endpoint.create)(app.backend, userId)).rejects.toThrow(
        new Error(`the token endpoint answered ${status} for ${userId}`),
      );
      expect(await sessionCount()).toBe(before);
    },
  );

  it("deletes the session when the token endpoint throws, and rethrows its error", async () => {
    const before = await sessionCount();
    const endpoint = withTokenEndpoint(async () => {
      throw new Error("handler broke");
    });
    await expect(runAsUser(endpoint.create)(app.backend, "run-as@example.com")).rejects.toThrow(
      "handler broke",
    );
    expect(await sessionCount()).toBe(before);
  });
});
