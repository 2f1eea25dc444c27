/**
 * GHSA-g38m-r43w-p2q7: on 1.4.9 an OAuth sign-in whose provider vouches for the email links
 * itself into an existing local account with that email, verified or not. An attacker who signed
 * up first with the victim's address and a password then shares the account the victim reaches
 * through the provider. Mitigated: implicit linking is off unless the app turns it on.
 */
import { genericOAuth } from "better-auth/plugins";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADVISORY } from "../../../src/auth/advisories/catalog.ts";
import { GENERIC_OAUTH } from "../../helpers/better-auth-line.ts";
import { type AdvisoryFixture, itOnPinnedLine, PASSWORD, startAdvisoryFixture } from "./fixture.ts";

let app: AdvisoryFixture;
let n = 0;
/** Who the identity provider says signs in (it always vouches for the email). */
let identity = { id: "", email: "" };

beforeAll(async () => {
  app = await startAdvisoryFixture({
    plugins: () => [
      genericOAuth({
        config: [
          {
            providerId: "idp",
            clientId: "advisory-client",
            clientSecret: "advisory-secret",
            authorizationUrl: "https://idp.invalid/authorize",
            tokenUrl: "https://idp.invalid/token",
            pkce: true,
            // The provider's side, in process: a code exchange and a profile with a verified email.
            getToken: async () => ({ accessToken: "idp-access-token", tokenType: "bearer" }),
            getUserInfo: async () => ({ ...identity, name: "Victim", emailVerified: true }),
          },
        ],
      }),
    ],
  });
});
afterAll(async () => {
  await app?.close();
});

/** The victim's first sign-in through the provider; the redirect it ends with, and the session. */
async function victimSignsInWithProvider() {
  const victim = app.browser();
  const start = await victim.send(
    "POST",
    `/api/auth${GENERIC_OAUTH.signIn}`,
    GENERIC_OAUTH.signInBody("idp", "/"),
  );
  expect(start.status, start.text).toBe(200);
  const state = new URL(start.body.url).searchParams.get("state")!;
  const callback = await fetch(
    `${app.url}/api/auth${GENERIC_OAUTH.callback("idp")}?code=idp-code&state=${state}`,
    {
      headers: { cookie: victim.jar.header() },
      redirect: "manual",
    },
  );
  victim.jar.absorb(callback);
  expect(callback.status).toBe(302);
  const session = await victim.send("GET", "/api/auth/get-session");
  return {
    location: callback.headers.get("location") ?? "",
    userId: session.body?.user?.id as string | undefined,
  };
}

async function preRegistered() {
  const email = `linked${++n}@example.com`;
  identity = { id: `idp-user-${n}`, email };
  const { response } = await app.signUp(email);
  expect(response.body.user.emailVerified).toBe(false);
  return { email, attackerUserId: response.body.user.id as string };
}

const idpAccountsOf = async (userId: string) =>
  (await app.rows("account")).filter((a) => a.userId === userId && a.providerId === "idp");

describe(`no implicit OAuth linking into an existing account (${ADVISORY.implicitOAuthLinking})`, () => {
  itOnPinnedLine(
    "reproduction: with the mitigation off, the victim lands in the attacker's account, whose password still works",
    async () => {
      await app.accept(ADVISORY.implicitOAuthLinking);
      try {
        const { email, attackerUserId } = await preRegistered();
        const { userId } = await victimSignsInWithProvider();
        expect(userId).toBe(attackerUserId);
        expect(await idpAccountsOf(attackerUserId)).toHaveLength(1);
        const attacker = await app
          .browser()
          .send("POST", "/api/auth/sign-in/email", { email, password: PASSWORD });
        expect(attacker.body.user.id).toBe(attackerUserId);
      } finally {
        await app.accept();
      }
    },
  );

  it("mitigated: the callback ends with account_not_linked and links nothing", async () => {
    const { attackerUserId } = await preRegistered();
    const { location, userId } = await victimSignsInWithProvider();
    expect(location).toContain("error=account_not_linked");
    expect(userId).toBeUndefined();
    expect(await idpAccountsOf(attackerUserId)).toHaveLength(0);
  });

  it("a provider sign-in for a new email still creates its user", async () => {
    identity = { id: `idp-user-new-${++n}`, email: `fresh${n}@example.com` };
    const { userId } = await victimSignsInWithProvider();
    expect(userId).toBeTruthy();
    expect(await idpAccountsOf(userId!)).toHaveLength(1);
  });
});
