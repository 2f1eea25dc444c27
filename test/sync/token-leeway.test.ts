/**
 * The WebSocket and the HTTP verifier share one clock rule (src/backend/auth/token-clock.ts): a
 * token is valid until `exp + CLOCK_LEEWAY_SECONDS`. A token already past `exp` but inside the
 * leeway is accepted at `connect` and must stay accepted until that deadline, not be expired by
 * the next sweep (the sweep runs every 100 ms here).
 */
import { decodeJwt } from "jose";
import { afterAll, beforeAll, expect, it } from "vitest";
import { CLOCK_LEEWAY_SECONDS } from "../../src/backend/auth/token-clock.ts";
import { RawSocket, type SyncApp, startSyncApp } from "./fixtures/harness.ts";

let app: SyncApp;
beforeAll(async () => {
  app = await startSyncApp();
});
afterAll(() => app?.close());

it(
  "keeps a token inside the leeway authenticated until exp + leeway, then expires it once",
  async () => {
    // exp = now - 1 s: expired by the token's own clock, valid for another leeway - 1 s. On a
    // machine too loaded to connect within those seconds the scenario does not arise (the token is
    // rightly refused): that attempt says nothing, and a fresh token is tried.
    let henry: Awaited<ReturnType<SyncApp["signIn"]>>;
    let exp: number;
    let s: RawSocket;
    for (let attempt = 1; ; attempt++) {
      henry = await app.signIn("henry", { tokenTtlSeconds: -1 });
      exp = decodeJwt(henry.token).exp as number;
      expect(exp * 1000).toBeLessThan(Date.now());
      s = await RawSocket.open(app.wsUrl);
      s.send({ type: "connect", v: 1, token: henry.token });
      const connected = await s.next((m) => m.type === "connected");
      if (Date.now() >= (exp + CLOCK_LEEWAY_SECONDS) * 1000 && attempt < 5) {
        s.close();
        continue;
      }
      expect(connected).toMatchObject({ authenticated: true });
      break;
    }
    s.send({ type: "subscribe", id: "me", path: "messages:whoami", args: {} });
    expect((await s.next((m) => m.type === "update" && m.id === "me")).value).toBe(henry.userId);

    // The only auth event is the expiry, and it comes no earlier than exp + leeway.
    const expired = await s.next((m) => m.type === "auth_error", (CLOCK_LEEWAY_SECONDS + 5) * 1000);
    const at = Date.now();
    expect(expired).toMatchObject({ code: "UNAUTHORIZED", message: "Token expired" });
    expect(at).toBeGreaterThanOrEqual((exp + CLOCK_LEEWAY_SECONDS) * 1000);
    expect(s.pending().filter((m) => m.type === "auth_error" || m.type === "authenticated")).toEqual([]);
    s.close();
  },
  (CLOCK_LEEWAY_SECONDS + 5) * 3000,
);
