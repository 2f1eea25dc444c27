/** The platform logger scrubs personal data and credentials from every string, not only by key. */
import { expect, it } from "vitest";
import { logger } from "../../src/backend/logger.ts";
import { setupLogCapture } from "../helpers/log-capture.ts";

const capture = setupLogCapture();

it("scrubs emails, JWTs and bearer credentials in messages and field values", () => {
  process.env.LOG_LEVEL = "info";
  const lines = capture();
  const jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1In0.c2lnbmF0dXJl";
  logger.error("sign-in failed for dora@example.com", {
    error: `Error: token ${jwt} refused`,
    header: "Basic ZG9yYTpodW50ZXIy",
    userEmail: "dora@example.com",
    list: ["x", "eve@example.com"],
  });
  const line = JSON.parse(lines.join(""));
  expect(line).toMatchObject({
    msg: "sign-in failed for [email]",
    error: "Error: token [token] refused",
    header: "Basic [redacted]",
    userEmail: "[redacted]",
    list: ["x", "[email]"],
  });
});

it("never prints deeply nested values raw, and cuts very long strings", () => {
  process.env.LOG_LEVEL = "info";
  const lines = capture();
  logger.info("deep", {
    a: { b: { c: { d: { e: { f: { password: "hunter2" } } } } } },
    long: "y".repeat(100_000),
  });
  const out = lines.join("");
  expect(out).not.toContain("hunter2");
  expect(out).toContain("[nested]");
  expect(out.length).toBeLessThan(10_000);
});
