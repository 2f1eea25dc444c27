/**
 * GHSA-fmh4-wcc4-5jm3: an organization invitation names an email; on 1.4.9 any signed-in user
 * whose email matches may accept it, verified or not, so an attacker who signs up with the
 * invitee's address (unverified) joins the organization. Mitigated: the invitation routes refuse
 * a user whose email is not verified.
 */
import { organization } from "better-auth/plugins";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADVISORY } from "../../../src/auth/advisories/catalog.ts";
import { type AdvisoryFixture, startAdvisoryFixture } from "./fixture.ts";

let app: AdvisoryFixture;
let owner: ReturnType<AdvisoryFixture["browser"]>;
let organizationId: string;
let n = 0;

beforeAll(async () => {
  app = await startAdvisoryFixture({
    plugins: (outbox) => [
      organization({
        sendInvitationEmail: async (data) => void outbox.invitations.push({ email: data.email, id: data.id }),
      }),
    ],
  });
  ({ browser: owner } = await app.signUp("owner@example.com"));
  const created = await owner.send("POST", "/api/auth/organization/create", { name: "Acme", slug: "acme" });
  expect(created.status).toBe(200);
  organizationId = created.body.id;
});
afterAll(async () => {
  await app?.close();
});

/** An invitation for a fresh address and an attacker signed up (unverified) with that address. */
async function invitedAddressTakenByAttacker() {
  const email = `invitee${++n}@example.com`;
  const { browser: attacker, response } = await app.signUp(email);
  expect(response.body.user.emailVerified).toBe(false);
  const invited = await owner.send("POST", "/api/auth/organization/invite-member", {
    email,
    role: "member",
    organizationId,
  });
  expect(invited.status).toBe(200);
  return { attacker, userId: response.body.user.id as string, invitationId: invited.body.id as string };
}

const memberOf = async (userId: string) =>
  (await app.rows("member")).some((m) => m.userId === userId && m.organizationId === organizationId);

describe(`invitations need a verified email (${ADVISORY.unverifiedInvitation})`, () => {
  it("reproduction: with the mitigation off, the unverified attacker accepts and joins", async () => {
    await app.accept(ADVISORY.unverifiedInvitation);
    try {
      const { attacker, userId, invitationId } = await invitedAddressTakenByAttacker();
      const res = await attacker.send("POST", "/api/auth/organization/accept-invitation", { invitationId });
      expect(res.status).toBe(200);
      expect(await memberOf(userId)).toBe(true);
    } finally {
      await app.accept();
    }
  });

  it("mitigated: accept, reject, get and list answer 403 EMAIL_NOT_VERIFIED and change nothing", async () => {
    const { attacker, userId, invitationId } = await invitedAddressTakenByAttacker();
    const attempts = [
      attacker.send("POST", "/api/auth/organization/accept-invitation", { invitationId }),
      attacker.send("POST", "/api/auth/organization/reject-invitation", { invitationId }),
      attacker.send("GET", `/api/auth/organization/get-invitation?id=${invitationId}`),
      attacker.send("GET", "/api/auth/organization/list-user-invitations"),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({
        code: "EMAIL_NOT_VERIFIED",
        message: "Verify your email address before using an invitation",
      });
    }
    expect(await memberOf(userId)).toBe(false);
    expect((await app.rows("invitation")).find((i) => i._id === invitationId)?.status).toBe("pending");
  });

  it("once the email is verified the invitee accepts", async () => {
    const { attacker: invitee, userId, invitationId } = await invitedAddressTakenByAttacker();
    await app.service.backend.write((db: any) => db.patch(userId, { emailVerified: true }));
    const res = await invitee.send("POST", "/api/auth/organization/accept-invitation", { invitationId });
    expect(res.status).toBe(200);
    expect(await memberOf(userId)).toBe(true);
  });
});
