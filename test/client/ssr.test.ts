/**
 * Server-side rendering helpers (src/client/server-rendering.ts) and the Better Auth client plugin
 * against the real example app: the JWT cookie cache of `getRequestToken` (fetch calls counted
 * through a wrapping fetch), function calls with the `Authorization` header, preloading and
 * `</script>`-safe serialization, and a live client taking over from preloaded data.
 */
import { createAuthClient } from "better-auth/client";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { api, internal } from "../../examples/app/app.ts";
import {
  BackendCallError,
  backendClient,
  decodeClaims,
  fetchAction,
  fetchMutation,
  fetchQuery,
  getRequestToken,
  type Preloaded,
  preloadQuery,
  serializePreloaded,
} from "../../src/client/index.ts";
import { CookieJar, type ExampleApp, PASSWORD, startExampleApp } from "../helpers/example-app.ts";
import { closeClients, liveClient, watch } from "../helpers/live-client.ts";
import { eventually } from "../helpers/wait.ts";

let app: ExampleApp;
let n = 0;
const email = () => `ssr${++n}@example.com`;

beforeAll(async () => {
  app = await startExampleApp();
});
afterEach(() => {
  closeClients();
  vi.useRealTimers();
});
afterAll(() => app?.close());

/** `fetch` that records the URL of every call. */
function countingFetch() {
  const calls: string[] = [];
  const f = ((input: string | URL | Request, init?: RequestInit) => {
    calls.push(String(input));
    return fetch(input, init);
  }) as typeof fetch;
  return { calls, fetch: f };
}

const sessionCookie = (jar: CookieJar) =>
  `service-auth.session_token=${jar.get("service-auth.session_token")}`;

describe("getRequestToken", () => {
  it("uses the fresh service-auth.jwt cookie without a network call", async () => {
    const { browser, token } = await app.signUp(email());
    const counter = countingFetch();
    const result = await getRequestToken(new Headers({ cookie: browser.jar.header() }), {
      url: app.url,
      fetch: counter.fetch,
    });
    expect(result).toEqual({ token, setCookies: [] });
    expect(counter.calls).toEqual([]);
  });

  it("fetches a new token when the cookie's JWT is within 60 s of exp", async () => {
    const { browser, token } = await app.signUp(email());
    const exp = decodeClaims(token)!.exp as number;
    vi.useFakeTimers({ toFake: ["Date"], now: exp * 1000 - 30_000 });
    const counter = countingFetch();
    const result = await getRequestToken(new Headers({ cookie: browser.jar.header() }), {
      url: app.url,
      fetch: counter.fetch,
    });
    expect(counter.calls).toEqual([`${app.url}/api/auth/backend/token`]);
    expect(result.token).not.toBe(token);
    expect(decodeClaims(result.token!)!.exp as number).toBeGreaterThan(exp);
    expect(result.setCookies.some((c) => c.startsWith(`service-auth.jwt=${result.token}`))).toBe(true);
    expect(await fetchQuery(api.users.me, {}, { url: app.url, token: result.token })).toMatchObject({
      email: `ssr${n}@example.com`,
    });
  });

  it("fetches one when there is no JWT cookie, and can skip the cache", async () => {
    const { browser, userId } = await app.signUp(email());
    const counter = countingFetch();
    const result = await getRequestToken(new Headers({ cookie: sessionCookie(browser.jar) }), {
      url: app.url,
      fetch: counter.fetch,
    });
    expect(counter.calls).toHaveLength(1);
    expect(decodeClaims(result.token!)!.sub).toBe(userId);
    await getRequestToken(new Headers({ cookie: browser.jar.header() }), {
      url: app.url,
      fetch: counter.fetch,
      cache: false,
    });
    expect(counter.calls).toHaveLength(2);
  });

  it("returns null when the session is gone (401) or there are no cookies", async () => {
    const { browser } = await app.signUp(email());
    const before = sessionCookie(browser.jar);
    expect((await browser.post("/api/auth/sign-out", {})).status).toBe(200);
    const counter = countingFetch();
    expect(
      await getRequestToken(new Headers({ cookie: before }), { url: app.url, fetch: counter.fetch }),
    ).toEqual({
      token: null,
      setCookies: [],
    });
    expect(counter.calls).toHaveLength(1);
    expect(await getRequestToken(new Headers(), { url: app.url, fetch: counter.fetch })).toEqual({
      token: null,
      setCookies: [],
    });
    expect(counter.calls).toHaveLength(1);
  });
});

describe("fetchQuery / fetchMutation / fetchAction", () => {
  it("send the token as Authorization and report typed errors", async () => {
    const { token, userId } = await app.signUp(email());
    expect(await fetchQuery(api.users.me, {}, { url: app.url, token })).toMatchObject({ _id: userId });
    await expect(fetchQuery(api.users.me, {}, { url: app.url })).rejects.toMatchObject({
      code: "UNAUTHORIZED",
      status: 401,
    });
    const id = await fetchMutation(api.messages.send, { body: "from the server" }, { url: app.url, token });
    expect(typeof id).toBe("string");
    const listed = await fetchQuery(api.messages.list, {}, { url: app.url, token });
    expect(listed.map((m: { _id: string }) => m._id)).toContain(id);
    const invalid = fetchMutation(api.messages.send, { body: "x" }, { url: app.url, token: "not.a.jwt" });
    await expect(invalid).rejects.toBeInstanceOf(BackendCallError);
    await expect(invalid).rejects.toMatchObject({ code: "UNAUTHORIZED", status: 401 });
    // Internal actions are not reachable over HTTP, not even with a valid token.
    await expect(
      fetchAction(internal.auth.rotateKeys as any, {}, { url: app.url, token }),
    ).rejects.toMatchObject({
      code: "FUNCTION_NOT_FOUND",
      status: 404,
    });
  });
});

describe("preloadQuery", () => {
  it("serializes safely for a script tag, and a client takes over with live updates", async () => {
    const { browser, token } = await app.signUp(email());
    const evil = "</script><script>alert(1)</script>";
    await fetchMutation(api.messages.send, { body: evil }, { url: app.url, token });
    const preloaded = await preloadQuery(api.messages.list, {}, { url: app.url, token });
    expect(preloaded.value.map((m: { body: string }) => m.body)).toContain(evil);

    const html = `<script type="application/json" id="data">${serializePreloaded(preloaded)}</script>`;
    expect(html.match(/<\/script>/gi)).toHaveLength(1);
    const hydrated = JSON.parse(/<script[^>]*>([\s\S]*)<\/script>/.exec(html)![1]) as Preloaded;
    expect(hydrated).toEqual(JSON.parse(JSON.stringify(preloaded)));

    // The browser renders `hydrated.value`, then subscribes to the same query: its first result is
    // the same data (nothing to re-render), and later writes arrive live.
    const live = liveClient(app.url, browser);
    const list = watch(live.client, hydrated.path, hydrated.args);
    await eventually(() => expect(list.values).toHaveLength(1));
    expect(list.values[0]).toEqual(hydrated.value);
    const other = await app.signUp(email());
    await fetchMutation(
      api.messages.send,
      { body: "live after hydration" },
      { url: app.url, token: other.token },
    );
    await eventually(() =>
      expect(list.last().map((m: { body: string }) => m.body)).toContain("live after hydration"),
    );
    expect(list.errors).toEqual([]);
  });
});

describe("Better Auth client plugin", () => {
  /** A Better Auth client in Node whose fetch keeps cookies like a browser on the site. */
  function authClientWithJar() {
    const jar = new CookieJar();
    const customFetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
      const headers = new Headers(init?.headers);
      headers.set("origin", app.url);
      if (jar.cookies.size) headers.set("cookie", jar.header());
      const response = await fetch(input, { ...init, headers });
      jar.absorb(response);
      return response;
    }) as typeof fetch;
    const client = createAuthClient({
      baseURL: app.url,
      plugins: [backendClient()],
      fetchOptions: { customFetchImpl },
    });
    return { jar, client };
  }

  it("getToken returns a JWT when signed in and null when not", async () => {
    const address = email();
    const { userId } = await app.signUp(address);
    const { client, jar } = authClientWithJar();
    expect(await client.backend.getToken()).toBeNull();

    const signIn = await client.signIn.email({ email: address, password: PASSWORD });
    expect(signIn.error).toBeNull();
    const token = await client.backend.getToken();
    expect(typeof token).toBe("string");
    expect(decodeClaims(token!)!.sub).toBe(userId);
    expect(jar.get("service-auth.jwt")).toBe(token);
    expect(await fetchQuery(api.users.me, {}, { url: app.url, token })).toMatchObject({ _id: userId });

    await client.signOut();
    expect(await client.backend.getToken()).toBeNull();
  });
});
