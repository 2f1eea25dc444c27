/**
 * The `service-auth.jwt` cookie follows the session whatever path made it (issue 9 item 2): set
 * whenever a response sets the session cookie (two-factor, anonymous, impersonation), never for a
 * session a later hook replaces (two-factor's challenge, with the `backend` plugin before or after
 * the two-factor plugin), and cleared when the session cookie ends (sign-out, delete-user).
 */
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserAt, type FixtureBrowser, freePort } from "../../helpers/browser.ts";
import { PASSWORD } from "../../helpers/example-app.ts";
import { startTestService, type TestService } from "../../helpers/service.ts";
import { totpOfUri } from "../../helpers/totp.ts";
import { pluginsApp } from "../fixtures/plugins-app.ts";

const JWT = "service-auth.jwt";

for (const backendFirst of [false, true]) {
  describe(`backend plugin ${backendFirst ? "before" : "after"} the other plugins`, () => {
    let service: TestService;
    let url: string;
    let n = 0;
    beforeAll(async () => {
      const port = await freePort();
      url = `http://127.0.0.1:${port}`;
      service = await startTestService({
        ...pluginsApp({ backendFirst }),
        port,
        envDefaults: { SITE_URL: url },
      });
    }, 60_000);
    afterAll(() => service?.close());

    const signUp = async (name: string): Promise<{ browser: FixtureBrowser; id: string; email: string }> => {
      const browser = browserAt(url);
      const email = `${name}${++n}@example.com`;
      const response = await browser.send("POST", "/api/auth/sign-up/email", {
        email,
        password: PASSWORD,
        name,
      });
      expect(response.status).toBe(200);
      return { browser, id: response.body.user.id, email };
    };
    const subject = (browser: FixtureBrowser) => decodeJwt(browser.jar.get(JWT)!).sub;

    it("two-factor: no JWT for the sign-in session it replaces by a challenge; one after the code", async () => {
      const { browser, email } = await signUp("tfa");
      const enabled = await browser.send("POST", "/api/auth/two-factor/enable", { password: PASSWORD });
      await browser.send("POST", "/api/auth/two-factor/verify-totp", {
        code: totpOfUri(enabled.body.totpURI),
      });

      const second = browserAt(url);
      const signIn = await second.send("POST", "/api/auth/sign-in/email", { email, password: PASSWORD });
      expect(signIn.body.twoFactorRedirect).toBe(true);
      expect(second.jar.get(JWT)).toBeUndefined();
      expect(second.jar.get("service-auth.session_token")).toBeUndefined();

      // The next period's code (Better Auth accepts one step ahead): the code used above is
      // accepted once and refused to this new sign-in (src/auth/one-time/used-totp.ts).
      await second.send("POST", "/api/auth/two-factor/verify-totp", {
        code: totpOfUri(enabled.body.totpURI, Date.now() + 30_000),
      });
      expect(second.jar.get(JWT)).toBeTruthy();
      const session = await second.send("GET", "/api/auth/get-session");
      expect(decodeJwt(second.jar.get(JWT)!).sessionId).toBe(session.body.session.id);
    });

    it("anonymous sign-in gets a JWT of the anonymous user", async () => {
      const browser = browserAt(url);
      const anon = await browser.send("POST", "/api/auth/sign-in/anonymous", {});
      expect(subject(browser)).toBe(anon.body.user.id);
    });

    it("impersonation: the JWT follows the session to the user and back", async () => {
      const admin = await signUp("admin");
      await service.backend.write((db) => db.patch("user", admin.id, { role: "admin" }));
      const target = await signUp("target");
      await admin.browser.send("POST", "/api/auth/sign-in/email", { email: admin.email, password: PASSWORD });
      expect(subject(admin.browser)).toBe(admin.id);

      const impersonated = await admin.browser.send("POST", "/api/auth/admin/impersonate-user", {
        userId: target.id,
      });
      expect(impersonated.status).toBe(200);
      expect(subject(admin.browser)).toBe(target.id);
      const back = await admin.browser.send("POST", "/api/auth/admin/stop-impersonating", {});
      expect(back.status).toBe(200);
      expect(subject(admin.browser)).toBe(admin.id);
    });

    it("sign-out and delete-user clear it", async () => {
      const out = await signUp("out");
      expect(out.browser.jar.get(JWT)).toBeTruthy();
      await out.browser.send("POST", "/api/auth/sign-out", {});
      expect(out.browser.jar.get(JWT)).toBeUndefined();

      const gone = await signUp("gone");
      const deleted = await gone.browser.send("POST", "/api/auth/delete-user", { password: PASSWORD });
      expect(deleted.status).toBe(200);
      expect(gone.browser.jar.get(JWT)).toBeUndefined();
    });
  });
}
