import { afterEach, describe, expect, it } from "vitest";
import { devOutbox } from "../../src/auth/mail/dev-outbox.ts";
import { parseEnvFile } from "../../src/backend/env/store.ts";
import { logFormat, logger } from "../../src/backend/logger.ts";
import { setupLogCapture } from "../helpers/log-capture.ts";

const capture = setupLogCapture();

describe("logger", () => {
  it("redacts secret-looking fields, nested ones included", () => {
    process.env.LOG_LEVEL = "info";
    const lines = capture();
    logger.error("boom", {
      token: "eyJ.secret.sig",
      request: { headers: { authorization: "Bearer abc" }, path: "/x" },
    });
    const out = lines.join("");
    expect(out).not.toContain("eyJ.secret.sig");
    expect(out).not.toContain("Bearer abc");
    expect(JSON.parse(out).request.path).toBe("/x");
  });

  it("honours LOG_LEVEL", () => {
    process.env.LOG_LEVEL = "warn";
    const lines = capture();
    logger.info("hidden");
    logger.warn("shown");
    expect(lines.join("")).not.toContain("hidden");
    expect(lines.join("")).toContain("shown");
    process.env.LOG_LEVEL = "silent";
    logger.error("never");
    expect(lines.join("")).not.toContain("never");
  });

  it("env file parse errors name the line, never its content", () => {
    expect(() => parseEnvFile("OK=1\nSERVICE_AUTH_SECRET supersecretvalue")).toThrow(/line 2/);
    expect(() => parseEnvFile("SERVICE_AUTH_SECRET supersecretvalue")).not.toThrow(/supersecret/);
  });
});

describe("log format (LOG_FORMAT)", () => {
  const saved = {
    format: process.env.LOG_FORMAT,
    nodeEnv: process.env.NODE_ENV,
    color: process.env.NO_COLOR,
  };
  const tty = Object.getOwnPropertyDescriptor(process.stderr, "isTTY");
  const restore = (name: string, value: string | undefined) => {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  };
  afterEach(() => {
    restore("LOG_FORMAT", saved.format);
    restore("NODE_ENV", saved.nodeEnv);
    restore("NO_COLOR", saved.color);
    if (tty) Object.defineProperty(process.stderr, "isTTY", tty);
    else delete (process.stderr as { isTTY?: boolean }).isTTY;
  });
  const onTerminal = (isTTY: boolean) =>
    Object.defineProperty(process.stderr, "isTTY", { value: isTTY, configurable: true, writable: true });

  it("is text in a development terminal, JSON in production, in a pipe, or when asked", () => {
    delete process.env.LOG_FORMAT;
    (process.env as Record<string, string>).NODE_ENV = "development";
    onTerminal(true);
    expect(logFormat()).toBe("text");
    (process.env as Record<string, string>).NODE_ENV = "production";
    expect(logFormat()).toBe("json");
    (process.env as Record<string, string>).NODE_ENV = "development";
    onTerminal(false);
    expect(logFormat()).toBe("json");
    process.env.LOG_FORMAT = "text";
    expect(logFormat()).toBe("text");
    onTerminal(true);
    process.env.LOG_FORMAT = "JSON";
    expect(logFormat()).toBe("json");
  });

  it("writes a readable line: time, level, message, key=value fields, still redacted", () => {
    process.env.LOG_LEVEL = "info";
    process.env.LOG_FORMAT = "text";
    onTerminal(false);
    const lines = capture();
    logger.warn("mail to ada@example.com failed", { attempt: 2, reason: "connection refused", token: "abc" });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^\d\d:\d\d:\d\d warn {2}mail to \[email\] failed {2}attempt=2 {2}reason="connection refused" {2}token=\[redacted\]\n$/,
    );
    expect(lines[0]).not.toContain("{");
  });

  it("colours only on a terminal, and not with NO_COLOR", () => {
    process.env.LOG_LEVEL = "info";
    process.env.LOG_FORMAT = "text";
    const lines = capture();
    onTerminal(true);
    delete process.env.NO_COLOR;
    logger.error("listening on http://localhost:3000");
    process.env.NO_COLOR = "1";
    logger.error("listening on http://localhost:3000");
    expect(lines[0]).toContain("\x1b[31m");
    // The link underlined.
    expect(lines[0]).toMatch(/\x1b\[4m[^ ]*http:\/\/localhost:3000[^ ]*\x1b\[24m/);
    expect(lines[1]).not.toContain("\x1b[");
  });

  it("puts the development outbox's link on a line of its own, usable as it is", async () => {
    process.env.LOG_LEVEL = "info";
    process.env.LOG_FORMAT = "text";
    onTerminal(false);
    const lines = capture();
    const link =
      "http://127.0.0.1:3000/api/auth/verify-email?token=eyJhbGciOiJIUzI1NiJ9.eyJhIjoxfQ.c2ln&callbackURL=/";
    await devOutbox().send({ to: "ada@example.com", subject: "Verify your email", text: link, link });
    const [first, second, ...rest] = lines[0].split("\n");
    expect(first).toMatch(/info {2}development outbox \(no SMTP_URL\): Verify your email {2}to=\[email\]$/);
    expect(rest).toEqual([""]);
    const shown = /^ +→ (\S+)$/.exec(second)?.[1];
    expect(new URL(shown!).searchParams.get("token")).toBe("eyJhbGciOiJIUzI1NiJ9.eyJhIjoxfQ.c2ln");
  });
});
