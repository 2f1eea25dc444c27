/**
 * `awaitsSecondFactor`, the question the `backend` plugin asks before minting a JWT: only the
 * password step of a two-factor user's sign-in, with the `twoFactor` plugin on, is held back.
 * The whole flow over HTTP is in two-factor.test.ts.
 */
import { describe, expect, it } from "vitest";
import { awaitsSecondFactor, type SecondFactorCtx } from "../../../src/auth/advisories/second-factor.ts";

const twoFactorUser = { newSession: { user: { twoFactorEnabled: true } } };
const withPlugin = { plugins: [{ id: "backend" }, { id: "two-factor" }] };
const ctx = (
  path: string | undefined,
  context: Partial<SecondFactorCtx["context"]> = {},
): SecondFactorCtx => ({ path, context: { options: withPlugin, ...twoFactorUser, ...context } });

describe("awaitsSecondFactor", () => {
  it("holds the JWT back on each first-factor sign-in of a two-factor user", () => {
    for (const path of ["/sign-in/email", "/sign-in/username", "/sign-in/phone-number"])
      expect(awaitsSecondFactor(ctx(path)), path).toBe(true);
  });

  it("lets every other path through, the second factor's own included", () => {
    for (const path of [
      undefined,
      "",
      "/sign-in/magic-link",
      "/sign-up/email",
      "/two-factor/verify-totp",
      "/get-session",
    ])
      expect(awaitsSecondFactor(ctx(path)), String(path)).toBe(false);
  });

  it("lets the sign-in through without the twoFactor plugin", () => {
    expect(awaitsSecondFactor(ctx("/sign-in/email", { options: {} }))).toBe(false);
    expect(awaitsSecondFactor(ctx("/sign-in/email", { options: { plugins: [{ id: "backend" }] } }))).toBe(
      false,
    );
  });

  it("lets the sign-in through for a user without two-factor, or without a new session", () => {
    for (const newSession of [
      null,
      undefined,
      {},
      { user: {} },
      { user: { twoFactorEnabled: false } },
      { user: { twoFactorEnabled: "true" } },
    ])
      expect(awaitsSecondFactor(ctx("/sign-in/email", { newSession })), JSON.stringify(newSession)).toBe(
        false,
      );
  });
});
