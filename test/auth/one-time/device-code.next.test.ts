/**
 * Device codes under concurrency (issue 45), on the newest patched line only (1.4.9's device
 * authorization is refused for an unfixed advisory, docs/security.md): an approved device code
 * polled 10 times at once is redeemed once — one access token, one session — and each refused poll
 * is a refused reuse in the audit trail. On SQLite and on PostgreSQL with the polls spread over two
 * instances.
 */
import { describe, expect, it } from "vitest";
import { engines, useApps } from "./engines.ts";
import { inParallel, statusCounts } from "./fixture.ts";

const TIMEOUT = 120_000;
const GRANT = "urn:ietf:params:oauth:grant-type:device_code";
let n = 0;

describe.each(engines())("device codes under concurrency: $name", (engine) => {
  const apps = useApps(engine);

  it(
    "an approved device code polled 10 times at once gives one token",
    async () => {
      const email = `device-${++n}@example.com`;
      const { browser, userId } = await apps().signUp(email);
      const code = await apps().browser().send("POST", "/api/auth/device/code", { client_id: "cli" });
      expect(code.status, code.text).toBe(200);
      // The verification page's visit claims the code for this session before it may approve it.
      const claimed = await browser.send(
        "GET",
        `/api/auth/device?user_code=${encodeURIComponent(code.body.user_code)}`,
      );
      expect(claimed.status, claimed.text).toBe(200);
      const approved = await browser.send("POST", "/api/auth/device/approve", {
        userCode: code.body.user_code,
      });
      expect(approved.status, approved.text).toBe(200);
      const sessionsBefore = (await apps().rows("session")).filter((s) => s.userId === userId).length;

      const polls = await inParallel(10, (i) =>
        apps().browser(i).send("POST", "/api/auth/device/token", {
          grant_type: GRANT,
          device_code: code.body.device_code,
          client_id: "cli",
        }),
      );
      expect(statusCounts(polls)).toEqual({ 200: 1, 400: 9 });
      expect(polls.find((p) => p.status === 200)!.body.access_token).toBeTruthy();
      const sessionsAfter = (await apps().rows("session")).filter((s) => s.userId === userId).length;
      expect(sessionsAfter - sessionsBefore).toBe(1);

      // Each refused poll presented a redeemed code: recorded, and nothing stored holds the code.
      const reuses = (await apps().rows("auditEvent")).filter(
        (e) => e.type === "credential.reused" && JSON.parse(e.details).method === "/device/token",
      );
      expect(reuses).toHaveLength(9);
      expect(reuses.every((e) => e.targetId === userId)).toBe(true);
      for (const table of ["verification", "auditEvent"])
        expect(JSON.stringify(await apps().rows(table))).not.toContain(code.body.device_code);
    },
    TIMEOUT,
  );
});
