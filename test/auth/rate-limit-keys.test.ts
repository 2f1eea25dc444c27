/**
 * How Better Auth's rate-limit keys are filed: `clientAndPath` reads both key formats (1.4's
 * `<ip><path>`, 1.7's `<ip>|<path>`), and `ruleOf` finds the rule a path falls under.
 */
import { describe, expect, it } from "vitest";
import { clientAndPath, ruleOf } from "../../src/auth/rate-limit/keys.ts";
import { AUTH_RATE_LIMITS } from "../../src/auth/rate-limit/rules.ts";

const PATTERNS = Object.keys(AUTH_RATE_LIMITS);

describe("clientAndPath", () => {
  it("reads 1.4's `<ip><path>` and 1.7's `<ip>|<path>` alike", () => {
    const expected = { client: "203.0.113.1", path: "/sign-in/email" };
    expect(clientAndPath("203.0.113.1/sign-in/email")).toEqual(expected);
    expect(clientAndPath("203.0.113.1|/sign-in/email")).toEqual(expected);
  });

  it("keys an IPv6 client by its /64 in either format", () => {
    const client = clientAndPath("2001:db8:1:2::1/sign-in/email").client;
    expect(clientAndPath("2001:db8:1:2::ffff|/sign-in/email").client).toBe(client);
    expect(clientAndPath("2001:db8:1:3::1/sign-in/email").client).not.toBe(client);
  });

  it("reads an empty path at the base path, in either format", () => {
    expect(clientAndPath("203.0.113.1")).toEqual({ client: "203.0.113.1", path: "" });
    expect(clientAndPath("203.0.113.1|")).toEqual({ client: "203.0.113.1", path: "" });
  });

  it("takes a `|` after the first `/` as part of a 1.4 path, not as a separator", () => {
    expect(clientAndPath("203.0.113.1/a|b")).toEqual({ client: "203.0.113.1", path: "/a|b" });
  });

  it("reads a key without an address (Better Auth found none) as an empty client", () => {
    expect(clientAndPath("/sign-in/email")).toEqual({ client: "", path: "/sign-in/email" });
    expect(clientAndPath("/a|b")).toEqual({ client: "", path: "/a|b" });
    expect(clientAndPath("|/sign-in/email")).toEqual({ client: "", path: "/sign-in/email" });
  });
});

describe("ruleOf", () => {
  it("puts every path below a `/*` pattern under it", () => {
    expect(ruleOf("/sign-in/email", PATTERNS)).toBe("/sign-in/*");
    expect(ruleOf("/sign-in/", PATTERNS)).toBe("/sign-in/*");
    expect(ruleOf("/forget-password/confirm", PATTERNS)).toBe("/forget-password/*");
  });

  it("matches a pattern without `/*` only exactly", () => {
    expect(ruleOf("/change-password", PATTERNS)).toBe("/change-password");
    expect(ruleOf("/backend/token", PATTERNS)).toBe("/backend/token");
    expect(ruleOf("/change-passwords", PATTERNS)).toBeUndefined();
    expect(ruleOf("/backend/tokens", PATTERNS)).toBeUndefined();
    expect(ruleOf("/change-password/x", PATTERNS)).toBeUndefined();
  });

  it("leaves paths without a rule, and the bare prefix of a `/*` pattern, to the general limit", () => {
    expect(ruleOf("/get-session", PATTERNS)).toBeUndefined();
    expect(ruleOf("/sign-in", PATTERNS)).toBeUndefined();
    expect(ruleOf("", PATTERNS)).toBeUndefined();
  });
});
