/**
 * Sign-in and token refresh for clients without a cookie jar: React Native / Expo apps, CLIs,
 * Node services, workers. Uses only `fetch` and `Headers` (no DOM, no `document.cookie`, no
 * `localStorage`), so it runs in Node.js and React Native alike.
 *
 * Credentials travel through the auth server's cookie header bridge (src/auth/http.ts): the
 * client sends the session cookies it holds in `Service-Auth-Cookie` and takes new ones from
 * `Set-Service-Auth-Cookie`. Chosen over Better Auth's `bearer` plugin because it needs nothing
 * on the server (every app already has it), it is the same signed session cookie a browser
 * holds (so every Better Auth endpoint, session refresh and revocation behave as for browsers),
 * and it leaves `Authorization: Bearer` to the backend's JWTs alone.
 * The cookies are kept in a {@link TokenStorage}: memory by default, the app's secure storage
 * (Expo SecureStore, the keychain) when it passes one.
 */
import type { FetchToken } from "./token-manager.ts";
import { memoryStorage, type TokenStorage } from "./token-storage.ts";

/**
 * Options of {@link NativeAuth}: where the session cookies are stored, the auth route prefix and
 * the `Origin` it sends.
 * @example
 * ```ts
 * const options: NativeAuthOptions = {
 *   storage: {
 *     getItem: (key) => SecureStore.getItemAsync(key),
 *     setItem: (key, value) => SecureStore.setItemAsync(key, value),
 *     removeItem: (key) => SecureStore.deleteItemAsync(key),
 *   },
 *   origin: "myapp://",
 * };
 * const auth = new NativeAuth("https://api.example.com", options);
 * ```
 */
export interface NativeAuthOptions {
  /** Where the session cookies are kept (default: in memory, lost when the process ends). */
  storage?: TokenStorage;
  /** Key under which they are stored (default `service-auth.cookies`). */
  storageKey?: string;
  /** Better Auth's route prefix (default `/api/auth`). */
  basePath?: string;
  /**
   * `Origin` sent with requests. Better Auth refuses a cookie-carrying POST (sign-out, …) without a
   * trusted Origin; that check protects browsers from cross-site requests, which a native app is
   * not. Default: the backend's own origin; an app may send its own scheme (e.g. `myapp://`)
   * listed in `TRUSTED_ORIGINS`.
   */
  origin?: string;
  /** `fetch` implementation (default the global one). */
  fetch?: typeof fetch;
}

/**
 * A failed auth call: the HTTP status and the server's `code` / `message`.
 * @example
 * ```ts
 * try {
 *   await auth.signInEmail({ email, password });
 * } catch (error) {
 *   if (error instanceof NativeAuthError && error.status === 401) showMessage("Wrong email or password");
 *   else throw error;
 * }
 * ```
 */
export class NativeAuthError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = "NativeAuthError";
  }
}

interface StoredCookie {
  value: string;
  /** ms since epoch; absent: kept until the server ends it */
  expiresAt?: number;
}

type CookieJar = Record<string, StoredCookie>;

const COOKIE_HEADER = "Service-Auth-Cookie";
const SET_COOKIE_HEADER = "Set-Service-Auth-Cookie";
/** Longest cookie jar stored: a session's cookies are a few hundred bytes. */
const MAX_JAR_CHARS = 16_384;

/**
 * Splits the bridge's `Set-Service-Auth-Cookie` (the `Set-Cookie` lines joined with ", ") back into
 * lines: a comma starts a new line only where a `name=` follows, never inside an `Expires` date.
 */
export function splitSetCookie(header: string): string[] {
  return header
    .split(/,\s*(?=[^;=\s,]+=)/)
    .map((line) => line.trim())
    .filter(Boolean);
}

/** The jar after the server's `Set-Cookie` lines: set, replaced or (empty value, `Max-Age=0`, past `Expires`) removed. */
export function applySetCookie(jar: CookieJar, lines: readonly string[], now = Date.now()): CookieJar {
  const next = { ...jar };
  for (const line of lines) {
    const [pair, ...attributes] = line.split(";").map((part) => part.trim());
    const eq = pair.indexOf("=");
    if (eq <= 0) continue;
    const name = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    let expiresAt: number | undefined;
    for (const attribute of attributes) {
      const [key, raw = ""] = attribute.split("=");
      if (/^max-age$/i.test(key)) expiresAt = now + Number(raw) * 1000;
      else if (/^expires$/i.test(key) && expiresAt === undefined) {
        const at = Date.parse(raw);
        if (!Number.isNaN(at)) expiresAt = at;
      }
    }
    if (value === "" || (expiresAt !== undefined && !(expiresAt > now))) delete next[name];
    else next[name] = expiresAt === undefined ? { value } : { value, expiresAt };
  }
  return next;
}

/**
 * The auth client of a native app or a Node process: email sign-up and sign-in, any other Better
 * Auth endpoint through {@link NativeAuth.request}, the backend JWT ({@link NativeAuth.fetchToken},
 * made for `BackendClient.setAuth`) and sign-out.
 *
 * @example
 * const auth = new NativeAuth("https://api.example.com", { storage: secureStore });
 * await auth.signInEmail({ email, password });
 * const client = new BackendClient("https://api.example.com");
 * client.setAuth(auth.fetchToken, (signedIn) => render(signedIn));
 */
export class NativeAuth {
  private readonly storage: TokenStorage;
  private readonly storageKey: string;
  private readonly authUrl: string;
  private readonly origin: string;
  private readonly fetchFn: typeof fetch;
  /** Cookie writes in order: a response read late must not resurrect cookies a later one ended. */
  private writes: Promise<unknown> = Promise.resolve();

  constructor(baseUrl: string, options: NativeAuthOptions = {}) {
    const base = new URL(baseUrl);
    this.storage = options.storage ?? memoryStorage();
    this.storageKey = options.storageKey ?? "service-auth.cookies";
    this.authUrl = `${base.origin}${options.basePath ?? "/api/auth"}`;
    this.origin = options.origin ?? base.origin;
    const f = options.fetch ?? globalThis.fetch;
    if (!f) throw new Error("No fetch implementation: pass options.fetch");
    this.fetchFn = f.bind(globalThis);
  }

  /** Signs up with email and password; signed in afterwards unless the app requires verification first. */
  signUpEmail(body: { email: string; password: string; name: string; [field: string]: unknown }) {
    return this.request<{ user: { id: string; email: string } }>("POST", "/sign-up/email", body);
  }

  /** Signs in with email and password; the session is kept in the storage. */
  signInEmail(body: { email: string; password: string; rememberMe?: boolean }) {
    return this.request<{ user: { id: string; email: string } }>("POST", "/sign-in/email", body);
  }

  /** The current session and user (`null`: signed out), as Better Auth's `get-session` answers. */
  getSession() {
    return this.request<{ session: { id: string }; user: { id: string } } | null>("GET", "/get-session");
  }

  /**
   * Any Better Auth endpoint under the base path (e.g. `/two-factor/verify-totp`), with the stored
   * session; new cookies it sets are stored. Rejects with {@link NativeAuthError} when not 2xx.
   */
  async request<T = unknown>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
    const res = await this.send(method, path, body);
    const text = await res.text();
    let data: any = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (!res.ok) {
      throw new NativeAuthError(
        res.status,
        data?.code,
        data?.message ?? `${method} ${path} answered ${res.status}`,
      );
    }
    return data as T;
  }

  /**
   * The backend JWT of the stored session (`GET …/backend/token`); null when there is no session
   * or the server ended it (401/403: revoked, expired, banned). Throws on network errors and 5xx,
   * which `BackendClient` retries. Pass it to `BackendClient.setAuth`.
   */
  readonly fetchToken: FetchToken = async () => {
    if (!(await this.hasSession())) return null;
    const res = await this.send("GET", "/backend/token");
    if (res.status === 401 || res.status === 403) {
      await res.body?.cancel();
      return null;
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new NativeAuthError(res.status, undefined, `token request answered ${res.status}`);
    }
    const data = (await res.json()) as { token?: string };
    return data.token ?? null;
  };

  /** Whether a session cookie is stored (it may still have been revoked on the server). */
  async hasSession(): Promise<boolean> {
    return Object.keys(await this.readJar()).some((name) => name.endsWith("session_token"));
  }

  /**
   * Ends the session on the server and forgets it here. The local copy goes even when the server
   * cannot be reached, so the device is signed out either way.
   */
  async signOut(): Promise<void> {
    try {
      if (await this.hasSession()) {
        const res = await this.send("POST", "/sign-out", {});
        await res.body?.cancel();
      }
    } finally {
      await this.enqueue(() => this.storage.removeItem(this.storageKey));
    }
  }

  private async send(method: "GET" | "POST", path: string, body?: unknown): Promise<Response> {
    const jar = await this.readJar();
    const now = Date.now();
    const cookie = Object.entries(jar)
      .filter(([, c]) => c.expiresAt === undefined || c.expiresAt > now)
      .map(([name, c]) => `${name}=${c.value}`)
      .join("; ");
    const headers = new Headers({ accept: "application/json", origin: this.origin });
    if (cookie) headers.set(COOKIE_HEADER, cookie);
    if (body !== undefined) headers.set("content-type", "application/json");
    const res = await this.fetchFn(`${this.authUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const set = res.headers.get(SET_COOKIE_HEADER);
    if (set) {
      await this.enqueue(async () => {
        const updated = applySetCookie(await this.readJar(), splitSetCookie(set));
        const json = JSON.stringify(updated);
        if (json.length > MAX_JAR_CHARS) throw new Error("Refusing to store more than 16 KB of cookies");
        await this.storage.setItem(this.storageKey, json);
      });
    }
    return res;
  }

  private enqueue(write: () => unknown): Promise<void> {
    const next = this.writes.then(write);
    this.writes = next.catch(() => {});
    return next.then(() => {});
  }

  private async readJar(): Promise<CookieJar> {
    const raw = await this.storage.getItem(this.storageKey);
    if (!raw) return {};
    try {
      const parsed = JSON.parse(raw) as unknown;
      return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as CookieJar) : {};
    } catch {
      // Storage written by something else: start signed out rather than crash.
      return {};
    }
  }
}
