import { describe, expect, it } from "vitest";
import { parseEnvFile } from "../../src/backend/env/store.ts";
import { logger } from "../../src/backend/logger.ts";
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
