/**
 * CVE-2026-110862: `/magic-link/verify` on 1.4.9 accepts any verification row as a token. An OAuth
 * state row is one: `/sign-in/social` stores the caller's `additionalData` in it (so `email` is the
 * caller's choice) under the `state` of the authorization URL it returns. Verifying that state as a
 * magic-link token signs the caller in as the chosen email. Refused: the row is not magic-link shaped.
 */
import { magicLink } from "better-auth/plugins";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADVISORY } from "../../../src/auth/advisories/catalog.ts";
import { isMagicLinkValue } from "../../../src/auth/advisories/plugin.ts";
import { ON_PINNED_LINE } from "../../helpers/better-auth-line.ts";
import { type AdvisoryFixture, itOnPinnedLine, startAdvisoryFixture } from "./fixture.ts";

let app: AdvisoryFixture;
const VICTIM = "victim@example.com";

beforeAll(async () => {
  app = await startAdvisoryFixture({
    plugins: (outbox) => [
      magicLink({
        sendMagicLink: ({ email, url, token }) => void outbox.magicLinks.push({ email, url, token }),
      }),
    ],
    options: {
      socialProviders: { github: { clientId: "advisory-client", clientSecret: "advisory-secret" } },
    },
  });
  expect((await app.signUp(VICTIM)).response.status).toBe(200);
});
afterAll(async () => {
  await app?.close();
});

/** An OAuth state whose stored row says `email: VICTIM`, as any visitor can make one. */
async function forgedState(): Promise<string> {
  const attacker = app.browser();
  const res = await attacker.send("POST", "/api/auth/sign-in/social", {
    provider: "github",
    callbackURL: "/",
    disableRedirect: true,
    additionalData: { email: VICTIM },
  });
  expect(res.status).toBe(200);
  const state = new URL(res.body.url).searchParams.get("state");
  expect(state).toBeTruthy();
  return state!;
}

describe(`magic-link verify takes only magic-link tokens (${ADVISORY.magicLinkForeignToken})`, () => {
  itOnPinnedLine(
    "reproduction: with the mitigation off, an OAuth state signs the attacker in as the victim",
    async () => {
      await app.accept(ADVISORY.magicLinkForeignToken);
      try {
        const attacker = app.browser();
        const res = await attacker.send("GET", `/api/auth/magic-link/verify?token=${await forgedState()}`);
        expect(res.status).toBe(200);
        expect(res.body.user.email).toBe(VICTIM);
        const victimId = (await app.rows("user")).find((u) => u.email === VICTIM)!._id;
        expect((await app.whoami(attacker.jar.get("service-auth.jwt"))).body.value).toBe(victimId);
      } finally {
        await app.accept();
      }
    },
  );

  it("refused: INVALID_TOKEN, no session, no JWT, the state row untouched", async () => {
    const attacker = app.browser();
    const state = await forgedState();
    const rowsBefore = await app.rows("verification");
    const res = await fetch(`${app.url}/api/auth/magic-link/verify?token=${state}`, {
      headers: { cookie: attacker.jar.header() },
      redirect: "manual",
    });
    attacker.jar.absorb(res);
    if (ON_PINNED_LINE) {
      // Our layer refuses it before Better Auth 1.4.9 would accept it.
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: "INVALID_TOKEN", message: "Invalid token" });
    } else {
      // The patched line refuses it itself (its magic-link rows have their own identifiers).
      expect(res.status).toBe(302);
      expect(new URL(res.headers.get("location")!, app.url).searchParams.get("error")).toBe("INVALID_TOKEN");
    }
    expect(attacker.jar.get("service-auth.session_token")).toBeUndefined();
    expect(attacker.jar.get("service-auth.jwt")).toBeUndefined();
    // 1.7 stores the state under an identifier of its own; on both lines no row went.
    expect(await app.rows("verification")).toEqual(rowsBefore);
    if (ON_PINNED_LINE) expect(rowsBefore.some((r) => r.identifier === state)).toBe(true);
  });

  it("a real magic link still signs in", async () => {
    const owner = app.browser();
    expect((await owner.send("POST", "/api/auth/sign-in/magic-link", { email: VICTIM })).status).toBe(200);
    const { token } = app.outbox.magicLinks.at(-1)!;
    const res = await owner.send("GET", `/api/auth/magic-link/verify?token=${token}`);
    expect(res.status).toBe(200);
    expect(res.body.user.email).toBe(VICTIM);
    expect(owner.jar.get("service-auth.jwt")).toBeTruthy();
  });
});

describe("isMagicLinkValue", () => {
  it("accepts what /sign-in/magic-link stores and nothing else", () => {
    expect(isMagicLinkValue(JSON.stringify({ email: "a@b.c" }))).toBe(true);
    expect(isMagicLinkValue(JSON.stringify({ email: "a@b.c", name: "A", attempt: 0 }))).toBe(true);
    for (const other of [
      JSON.stringify({ email: "a@b.c", callbackURL: "/", codeVerifier: "x", state: "s" }),
      JSON.stringify({ name: "A" }),
      JSON.stringify({ email: 1 }),
      JSON.stringify(["a@b.c"]),
      "123456:0",
      "user-id",
      "null",
    ]) {
      expect(isMagicLinkValue(other)).toBe(false);
    }
    // A row whose value is not text (an adapter that parsed it) is not one either.
    for (const notText of [undefined, null, 42, { email: "a@b.c" }])
      expect(isMagicLinkValue(notText)).toBe(false);
  });
});
