/** `SITE_URL` plus `TRUSTED_ORIGINS`: parsing, the start's check, the matcher and the CORS rule built on them. */
import { describe, expect, it } from "vitest";
import { corsRule } from "../../src/auth/http.ts";
import { originMatcher, originSettingsProblems, trustedOriginsOf } from "../../src/auth/site-origins.ts";
import { corsHeaders } from "../../src/backend/http/cors-policy.ts";

const envOf = (vars: Record<string, string>) => ({ get: (name: string) => vars[name] });

describe("trusted origins", () => {
  it("lists SITE_URL's origin first, then each entry normalized, without repeats", () => {
    const env = envOf({
      SITE_URL: "https://app.example.com/base/",
      TRUSTED_ORIGINS:
        " https://admin.example.com/ ,http://localhost:5173,https://app.example.com,https://*.example.org",
    });
    expect(trustedOriginsOf(env)).toEqual([
      "https://app.example.com",
      "https://admin.example.com",
      "http://localhost:5173",
      "https://*.example.org",
    ]);
    expect(originSettingsProblems(env)).toEqual([]);
  });

  it("refuses entries that are not origins, naming each", () => {
    const env = envOf({
      SITE_URL: "ftp://x",
      TRUSTED_ORIGINS:
        "*,https://a.example.com/path,javascript:alert(1),https://*.com,https://a*.example.com,ok",
    });
    const problems = originSettingsProblems(env);
    expect(problems.map((p) => p.name)).toEqual([
      "SITE_URL",
      "TRUSTED_ORIGINS",
      "TRUSTED_ORIGINS",
      "TRUSTED_ORIGINS",
      "TRUSTED_ORIGINS",
      "TRUSTED_ORIGINS",
      "TRUSTED_ORIGINS",
    ]);
    expect(problems.map((p) => p.problem).join("\n")).toContain(
      'entry "https://a.example.com/path" has more',
    );
    // Only valid entries reach the list.
    expect(trustedOriginsOf(envOf({ SITE_URL: "https://s.example", TRUSTED_ORIGINS: "*,ok" }))).toEqual([
      "https://s.example",
    ]);
  });

  it("matches exact origins and one-label-or-more sub-domains of a pattern, of its scheme only", () => {
    const match = originMatcher(["https://app.example.com", "https://*.example.org"]);
    expect(match("https://app.example.com")).toBe("https://app.example.com");
    expect(match("https://app.example.com:444")).toBeNull();
    expect(match("http://app.example.com")).toBeNull();
    expect(match("https://a.example.org")).toBe("https://a.example.org");
    expect(match("https://a.b.example.org")).toBe("https://a.b.example.org");
    expect(match("http://a.example.org")).toBeNull();
    expect(match("https://example.org")).toBeNull();
    expect(match("https://evil-example.org")).toBeNull();
    expect(match("https://evil.com/.example.org")).toBeNull();
    expect(match("https://.example.org")).toBeNull();
    expect(match("")).toBeNull();
    expect(match("null")).toBeNull();
  });
});

describe("the CORS rule over several origins", () => {
  const env = envOf({ SITE_URL: "https://app.example.com", TRUSTED_ORIGINS: "https://admin.example.com" });
  const headersFor = (origin: string) =>
    Object.fromEntries(corsHeaders(corsRule(env), { origin, method: "POST" }));

  it("answers each listed origin with itself, credentials allowed, varying on Origin", () => {
    for (const origin of ["https://app.example.com", "https://admin.example.com"]) {
      const headers = headersFor(origin);
      expect(headers["access-control-allow-origin"]).toBe(origin);
      expect(headers["access-control-allow-credentials"]).toBe("true");
      expect(headers.vary).toBe("Origin");
    }
  });

  it("answers an unlisted origin without an allow-origin header (never `*`)", () => {
    const headers = headersFor("https://evil.example");
    expect(headers["access-control-allow-origin"]).toBeUndefined();
    expect(headers.vary).toBe("Origin");
  });

  it("follows a changed TRUSTED_ORIGINS (the rule is rebuilt when the settings change)", () => {
    const vars: Record<string, string> = { SITE_URL: "https://app.example.com", TRUSTED_ORIGINS: "" };
    const live = envOf(vars);
    const allow = () =>
      Object.fromEntries(corsHeaders(corsRule(live), { origin: "https://new.example.com", method: "GET" }))[
        "access-control-allow-origin"
      ];
    expect(allow()).toBeUndefined();
    vars.TRUSTED_ORIGINS = "https://new.example.com";
    expect(allow()).toBe("https://new.example.com");
  });
});
