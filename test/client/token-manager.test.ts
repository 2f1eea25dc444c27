/** Token management rules of requirements §3.2, on the TokenManager itself (real timers, real JWTs). */
import { describe, expect, it } from "vitest";
import { decodeJwtTimes, TokenManager } from "../../src/client/token-manager.ts";
import { eventually, sleep } from "../helpers/wait.ts";
import { makeKeys, signToken } from "../sync/fixtures/auth.ts";

const keys = await makeKeys("tm");
const token = (ttl: number) => signToken(keys, { sub: "u", sessionId: "s" }, ttl);

describe("TokenManager", () => {
  it("decodes exp and iat", async () => {
    const t = await token(900);
    const { exp, iat } = decodeJwtTimes(t);
    expect(exp! - iat!).toBe(900);
    expect(decodeJwtTimes("garbage")).toEqual({});
  });

  it("deduplicates concurrent fetches and caches a fresh token", async () => {
    let calls = 0;
    const m = new TokenManager(async () => {
      calls++;
      await sleep(20);
      return token(900);
    });
    const got = await Promise.all([m.getToken(), m.getToken(), m.refresh(), m.getToken()]);
    expect(calls).toBe(1);
    expect(new Set(got).size).toBe(1);
    expect(await m.getToken()).toBe(got[0]);
    expect(calls).toBe(1);
    m.stop();
  });

  it("treats a token as expired 60 s before exp", async () => {
    let calls = 0;
    const m = new TokenManager(async () => {
      calls++;
      return token(90); // lifetime 90 s: the margin is min(60 s, 45 s) = 45 s, so fresh for 45 s
    });
    await m.getToken();
    await m.getToken();
    expect(calls).toBe(1);
    const m2 = new TokenManager(
      async () => {
        calls++;
        return token(900);
      },
      { expiryMarginMs: 60_000 },
    );
    const t = await m2.getToken();
    expect(decodeJwtTimes(t!).exp! * 1000 - Date.now()).toBeGreaterThan(60_000);
    m.stop();
    m2.stop();
  });

  it("refreshes ahead of expiry and reports the new token", async () => {
    const refreshed: (string | null)[] = [];
    const m = new TokenManager(() => token(2), { onRefresh: (t) => refreshed.push(t) });
    const first = await m.getToken();
    await eventually(() => expect(refreshed.length).toBeGreaterThanOrEqual(1));
    expect(refreshed[0]).not.toBe(first);
    m.stop();
  });

  it("retries thrown errors with backoff and reports null as signed out", async () => {
    let calls = 0;
    const errors: unknown[] = [];
    const m = new TokenManager(
      async () => {
        calls++;
        if (calls < 3) throw new Error("HTTP 502");
        return calls === 3 ? token(900) : null;
      },
      { retryInitialDelayMs: 10, onFetchError: (e) => errors.push(e) },
    );
    expect(await m.getToken()).toBeTypeOf("string");
    expect(errors.length).toBe(2);
    expect(await m.refresh()).toBe(null);
    m.stop();
  });
});
