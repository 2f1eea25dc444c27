/**
 * The `backend` plugin's own rules (`src/auth/plugins/backend/index.ts`) as functions, without a server:
 * how `Set-Cookie` lines set or end a cookie, what the plugin refuses to be built with, and the final-response hook that ends the JWT cookie with the session cookie (the
 * cookie line it writes from Better Auth's cookie attributes). test/auth/plugin.test.ts checks the
 * same plugin through Better Auth's routes.
 */
import { describe, expect, it } from "vitest";
import { backend, cookieChange, KEY_PATHS } from "../../src/auth/plugins/backend/index.ts";

const JWT = "service-auth.jwt";
const SESSION = "service-auth.session_token";
const authConfig = (provider: Record<string, unknown> = {}) =>
  ({ providers: [{ issuer: "https://auth.example", audience: "app", ...provider }] }) as any;

describe("cookieChange", () => {
  it("is undefined without a line for the cookie (a longer name is another cookie)", () => {
    expect(cookieChange([], JWT)).toBeUndefined();
    expect(
      cookieChange([`${SESSION}=abc; Path=/`, `${JWT}x=abc; Path=/`, `x${JWT}=abc`], JWT),
    ).toBeUndefined();
  });

  it("set: a value, whatever the other attributes", () => {
    expect(cookieChange([`${JWT}=abc`], JWT)).toBe("set");
    expect(cookieChange([`${JWT}=abc; Path=/; Max-Age=900; HttpOnly`], JWT)).toBe("set");
    expect(cookieChange([`${JWT}=abc; Max-Age=10`], JWT)).toBe("set");
    expect(cookieChange([`${JWT}=abc; Max-Age=00`], JWT)).toBe("set");
    expect(cookieChange([`${JWT}=abc; X-Max-Age=0`], JWT)).toBe("set");
  });

  it("cleared: an empty value, or Max-Age=0 in any case and spacing", () => {
    expect(cookieChange([`${JWT}=`], JWT)).toBe("cleared");
    expect(cookieChange([`${JWT}=; Path=/`], JWT)).toBe("cleared");
    expect(cookieChange([`${JWT}=abc; Path=/; Max-Age=0`], JWT)).toBe("cleared");
    expect(cookieChange([`${JWT}=abc;max-age=0;Path=/`], JWT)).toBe("cleared");
    expect(cookieChange([`${JWT}=abc;   MAX-AGE=0   ; HttpOnly`], JWT)).toBe("cleared");
  });

  it("the last line for the cookie wins", () => {
    expect(cookieChange([`${JWT}=abc`, `${JWT}=; Max-Age=0`], JWT)).toBe("cleared");
    expect(cookieChange([`${JWT}=; Max-Age=0`, `${JWT}=abc`, `${SESSION}=; Max-Age=0`], JWT)).toBe("set");
  });
});

describe("building the plugin", () => {
  it("needs a provider", () => {
    expect(() => backend({ authConfig: { providers: [] } as any })).toThrow(
      "backend plugin: authConfig needs one JWT provider",
    );
  });

  it("needs a positive whole token lifetime; 900 s by default", () => {
    for (const expirationSeconds of [0, -1, 1.5, Number.NaN]) {
      expect(
        () => backend({ authConfig: authConfig(), jwt: { expirationSeconds } }),
        String(expirationSeconds),
      ).toThrow("backend plugin: jwt.expirationSeconds must be a positive integer");
    }
    expect(backend({ authConfig: authConfig(), jwt: { expirationSeconds: 1 } }).options).toEqual({
      basePath: "/api/auth",
      expirationSeconds: 1,
    });
    expect(backend({ authConfig: authConfig() }).options).toEqual({
      basePath: "/api/auth",
      expirationSeconds: 900,
    });
  });

  it("refuses a key-set URL outside its base path, naming both", () => {
    const jwksUrl = "https://site.example/api/auth/backend/jwks";
    expect(() => backend({ authConfig: authConfig({ jwksUrl }), options: { basePath: "/other" } })).toThrow(
      `backend plugin: authConfig fetches keys from ${jwksUrl}, which is not under basePath "/other"; pass the same basePath to authConfig(env, { basePath })`,
    );
    expect(() =>
      backend({ authConfig: authConfig({ jwksUrl: "https://site.example/api/auth/backend/jwks/x" }) }),
    ).toThrow(/not under basePath "\/api\/auth"/);
    // The path of the URL, not its text: a query string does not count.
    expect(() => backend({ authConfig: authConfig({ jwksUrl: `${jwksUrl}?v=1` }) })).not.toThrow();
    expect(backend({ authConfig: authConfig({ jwksUrl }) }).options.basePath).toBe("/api/auth");
    expect(
      backend({
        authConfig: authConfig({ jwksUrl: "https://site.example/auth/backend/jwks" }),
        options: { basePath: "/auth" },
      }).options.basePath,
    ).toBe("/auth");
  });

  it("is the plugin `backend` with the token, key-set and server-only key endpoints", () => {
    const plugin = backend({ authConfig: authConfig() });
    expect(plugin.id).toBe("backend");
    expect(plugin.endpoints.getBackendToken.path).toBe("/backend/token");
    expect(plugin.endpoints.getBackendJwks.path).toBe("/backend/jwks");
    expect(plugin.endpoints.getLatestJwks.path).toBe(KEY_PATHS.getLatestJwks);
    expect(plugin.endpoints.rotateKeys.path).toBe(KEY_PATHS.rotateKeys);
    expect(plugin.endpoints.retireKeys.path).toBe(KEY_PATHS.retireKeys);
    expect(KEY_PATHS).toEqual({
      getLatestJwks: "/backend/latest-jwks",
      rotateKeys: "/backend/rotate-keys",
      retireKeys: "/backend/retire-keys",
    });
    expect(plugin.endpoints.retireKeys.options).toMatchObject({
      method: "POST",
      metadata: { SERVER_ONLY: true },
    });
    expect(plugin.endpoints.rotateKeys.options).toMatchObject({
      method: "POST",
      metadata: { SERVER_ONLY: true },
    });
    expect(plugin.endpoints.getLatestJwks.options).toMatchObject({
      method: "POST",
      metadata: { SERVER_ONLY: true },
    });
    expect(plugin.endpoints.getBackendToken.options).toMatchObject({ method: "GET", requireHeaders: true });
    expect(plugin.endpoints.getBackendJwks.options).toMatchObject({ method: "GET" });
  });
});

describe("the final response: the JWT cookie ends with the session cookie", () => {
  /** Better Auth's context as onResponse reads it: the session cookie's name and the cookie maker. */
  const context = (attributes: Record<string, unknown>) => ({
    authCookies: { sessionToken: { name: SESSION } },
    createAuthCookie: (name: string, overrides: { maxAge: number }) => ({
      name: `service-auth.${name}`,
      attributes: { ...attributes, ...(attributes.maxAge === "none" ? { maxAge: undefined } : overrides) },
    }),
  });
  const respond = (lines: string[], init: ResponseInit = {}) => {
    const headers = new Headers({ "content-type": "application/json", "x-other": "1" });
    for (const line of lines) headers.append("set-cookie", line);
    return new Response('{"ok":true}', { status: 200, statusText: "Fine", ...init, headers });
  };
  const plugin = backend({ authConfig: authConfig() });
  const onResponse = (response: Response, attributes: Record<string, unknown> = {}) =>
    plugin.onResponse(response, context(attributes)) as Promise<{ response: Response } | undefined>;

  it("replaces a JWT cookie set beside an ended session cookie by one that ends it", async () => {
    const response = respond(
      [
        `${SESSION}=; Max-Age=0; Path=/`,
        `${JWT}=token-of-a-deleted-session; Max-Age=900; Path=/`,
        "other=1; Path=/",
      ],
      { status: 202, statusText: "Challenge" },
    );
    const attributes = { path: "/", httpOnly: true, secure: true, sameSite: "lax", domain: "site.example" };
    const result = await onResponse(response, attributes);
    expect(result).toBeDefined();
    const replaced = result!.response;
    expect(replaced.status).toBe(202);
    expect(replaced.statusText).toBe("Challenge");
    expect(await replaced.text()).toBe('{"ok":true}');
    expect(replaced.headers.get("content-type")).toBe("application/json");
    expect(replaced.headers.get("x-other")).toBe("1");
    expect(replaced.headers.getSetCookie()).toEqual([
      `${SESSION}=; Max-Age=0; Path=/`,
      "other=1; Path=/",
      `${JWT}=; Max-Age=0; Domain=site.example; Path=/; Secure; HttpOnly; SameSite=Lax`,
    ]);
  });

  it("writes the cookie line from the attributes Better Auth gives", async () => {
    const ended = async (attributes: Record<string, unknown>) => {
      const result = await onResponse(respond([`${SESSION}=; Max-Age=0`, `${JWT}=t`]), attributes);
      return result!.response.headers.getSetCookie().at(-1);
    };
    expect(await ended({})).toBe(`${JWT}=; Max-Age=0; Path=/`);
    expect(await ended({ path: "/app", sameSite: "STRICT" })).toBe(
      `${JWT}=; Max-Age=0; Path=/app; SameSite=Strict`,
    );
    expect(await ended({ sameSite: "none", secure: true })).toBe(
      `${JWT}=; Max-Age=0; Path=/; Secure; SameSite=None`,
    );
    expect(await ended({ maxAge: "none", httpOnly: true, domain: "" })).toBe(`${JWT}=; Path=/; HttpOnly`);
  });

  it("leaves every other response alone", async () => {
    const cases = [
      [],
      [`${JWT}=t; Path=/`],
      [`${SESSION}=s; Path=/`, `${JWT}=t; Path=/`],
      [`${SESSION}=; Max-Age=0`],
      [`${SESSION}=; Max-Age=0`, `${JWT}=; Max-Age=0`],
      [`${SESSION}=; Max-Age=0`, `${JWT}=t`, `${JWT}=; Max-Age=0`],
    ];
    for (const lines of cases) expect(await onResponse(respond(lines)), lines.join(" | ")).toBeUndefined();
  });
});
