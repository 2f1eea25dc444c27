/** Setting values as shown in refusals and `env list`: secrets by name, passwords inside URLs. */
import { describe, expect, it } from "vitest";
import { maskSettingValue } from "../../src/backend/settings/mask.ts";
import { SettingsCheck, SettingsRefusal, settingProblem } from "../../src/backend/settings/problems.ts";

describe("maskSettingValue", () => {
  it("masks secrets by name, whole", () => {
    for (const name of [
      "SERVICE_AUTH_SECRET",
      "JWKS",
      "GITHUB_CLIENT_SECRET",
      "API_KEY",
      "DB_PASSWORD",
      "SIGNING_KEY",
    ])
      expect(maskSettingValue(name, "abc123")).toBe("**** (6 characters)");
  });

  it("masks the password of a URL, keeping the rest", () => {
    expect(maskSettingValue("DATABASE_URL", "postgres://app:p@ss:w0rd@db:5432/svc")).toBe(
      "postgres://app:****@db:5432/svc",
    );
    expect(maskSettingValue("SMTP_URL", "smtp://mailer:pw@127.0.0.1:2525")).toBe(
      "smtp://mailer:****@127.0.0.1:2525",
    );
    expect(maskSettingValue("DATABASE_URL", "postgres://app@db/svc")).toBe("postgres://app@db/svc");
    expect(maskSettingValue("SITE_URL", "https://example.com:8443/a")).toBe("https://example.com:8443/a");
  });
});

describe("SettingsCheck", () => {
  it("collects every problem, then refuses once naming all, values masked", () => {
    const check = new SettingsCheck();
    check.add(
      settingProblem("DATABASE_URL", "mysql://root:pw-1@h/db", 'unknown scheme "mysql:"', "use postgres://…"),
    );
    expect(check.read(() => 5)).toBe(5);
    check.read(() => {
      throw new SettingsRefusal([settingProblem("PORT", "x", "not a port number", "set PORT=3000")]);
    });
    expect(() => check.read(() => JSON.parse("{"))).toThrow(SyntaxError);
    let refusal: SettingsRefusal | undefined;
    try {
      check.refuseIfAny();
    } catch (error) {
      refusal = error as SettingsRefusal;
    }
    expect(refusal).toBeInstanceOf(SettingsRefusal);
    expect(refusal?.message).toBe(
      [
        "refusing to start: 2 settings to fix",
        '  DATABASE_URL="mysql://root:****@h/db": unknown scheme "mysql:"',
        "    fix: use postgres://…",
        '  PORT="x": not a port number',
        "    fix: set PORT=3000",
      ].join("\n"),
    );
    expect(() => new SettingsCheck().refuseIfAny()).not.toThrow();
  });
});
