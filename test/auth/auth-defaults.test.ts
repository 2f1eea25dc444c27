/**
 * `withAuthDefaults`: Better Auth's logger (driven by Better Auth's own `createLogger`) writes
 * redacted JSON through the platform logger and obeys LOG_LEVEL; the native password hasher is the
 * default; whatever the app sets wins.
 */
import { createLogger } from "@better-auth/core/env";
import type { BetterAuthOptions } from "better-auth";
import { describe, expect, it } from "vitest";
import { hashPassword, verifyPassword } from "../../src/auth/password.ts";
import { withAuthDefaults } from "../../src/auth/with-auth-defaults.ts";
import { setupLogCapture } from "../helpers/log-capture.ts";

/** Console output is captured too, to catch a bypass of the platform logger. */
const capture = setupLogCapture({ console: true });

const betterAuthLog = (options: BetterAuthOptions = {}) => createLogger(withAuthDefaults(options).logger);
/** The result as plain options (its static type is the input's). */
const defaults = (options: BetterAuthOptions): BetterAuthOptions => withAuthDefaults(options);

describe("Better Auth logger bridge", () => {
  it("writes JSON lines through the platform logger with emails, tokens and secrets redacted", () => {
    process.env.LOG_LEVEL = "info";
    const lines = capture();
    const jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1In0.c2lnbmF0dXJl";
    const log = betterAuthLog();
    log.error("User not found", { email: "alice@example.com" });
    log.warn("odd request from bob@example.org", { headers: { authorization: `Bearer ${jwt}` } });
    log.info("callback", { url: `https://app.example/cb?code=1&token=${jwt}`, clientSecret: "s3cr3t" });
    log.error("failed", new Error("no account for carol@example.net"));
    const out = lines.join("");
    for (const secret of ["alice@", "bob@", "carol@", jwt, "s3cr3t", "example.com", "console."])
      expect(out).not.toContain(secret);
    const parsed = lines.map((l) => JSON.parse(l));
    expect(parsed.map((l) => [l.level, l.msg, l.source])).toEqual([
      ["error", "User not found", "better-auth"],
      ["warn", "odd request from [email]", "better-auth"],
      ["info", "callback", "better-auth"],
      ["error", "failed", "better-auth"],
    ]);
    expect(parsed[3].details).toEqual([{ name: "Error", message: "no account for [email]" }]);
  });

  it("obeys LOG_LEVEL, read per line", () => {
    const lines = capture();
    const log = betterAuthLog();
    process.env.LOG_LEVEL = "warn";
    log.info("hidden info");
    log.success("hidden success");
    log.warn("shown warn");
    process.env.LOG_LEVEL = "silent";
    log.error("hidden error");
    process.env.LOG_LEVEL = "info";
    log.info("shown info");
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(["shown warn", "shown info"]);
  });

  it("lets the app's logger fields win", () => {
    process.env.LOG_LEVEL = "info";
    const lines = capture();
    betterAuthLog({ logger: { disabled: true } }).error("silenced");
    betterAuthLog({ logger: { level: "error" } }).warn("below the app's level");
    const own: string[] = [];
    betterAuthLog({ logger: { log: (_level, message) => own.push(message) } }).error("to the app");
    expect(lines).toEqual([]);
    expect(own).toEqual(["to the app"]);
  });
});

describe("password hasher default", () => {
  it("uses the native hasher when the app sets none, and keeps the other password options", async () => {
    const options = defaults({ emailAndPassword: { enabled: true, minPasswordLength: 12 } });
    const password = options.emailAndPassword?.password;
    expect(password?.verify).toBe(verifyPassword);
    // The hash is the native one behind the sign-up pre-hashing (password-prehash.ts).
    const made = await password!.hash!("pw-123456");
    expect(await verifyPassword({ hash: made, password: "pw-123456" })).toBe(true);
    expect(hashPassword).not.toBe(password?.hash);
    expect(options.plugins?.map((p) => p.id)).toEqual([
      "service-auth-password-prehash",
      "service-auth-password-length-errors",
    ]);
    expect(options.emailAndPassword?.minPasswordLength).toBe(12);
  });

  it("keeps an app's own hash or verify (never mixed with the native one), hashing ahead with the app's", async () => {
    const hash = async (p: string) => `plain:${p}`;
    const options = defaults({ emailAndPassword: { enabled: true, password: { hash } } });
    expect(options.emailAndPassword?.password?.verify).toBeUndefined();
    expect(await options.emailAndPassword?.password?.hash?.("x")).toBe("plain:x");
  });

  it("adds no email and password section to options without one", () => {
    expect(defaults({}).emailAndPassword).toBeUndefined();
  });
});
