/**
 * Client-side JWT management (requirements §3.2): caches the token, treats it as expired 60 s before its
 * `exp`, refreshes it ahead of time, deduplicates concurrent fetches, and tells a sign-out
 * (`fetchToken` resolved to null: the token endpoint answered 401) from a failure (it threw:
 * network error or 5xx, e.g. `503 DATABASE_UNAVAILABLE` during a database outage), which is
 * retried with backoff while the user stays signed in.
 * Browser-safe: no Node imports.
 */
import { type BackoffPolicy, backoffDelayMs } from "../protocol/backoff.ts";

/** Retrying a failed token fetch; the options may change first wait and cap. */
const FETCH_RETRY: BackoffPolicy = { firstMs: 250, maxMs: 30_000, jitter: "equal" };

/**
 * Fetches a JWT; `null` means "no valid session" (signed out). Throw on transient failures.
 * @example
 * ```ts
 * const fetchToken: FetchToken = async ({ forceRefresh }) => {
 *   const res = await fetch("/api/auth/backend/token", { credentials: "include" });
 *   if (res.status === 401) return null; // signed out
 *   if (!res.ok) throw new Error(`token endpoint answered ${res.status}`); // retried
 *   return ((await res.json()) as { token: string }).token;
 * };
 * backend.setAuth(fetchToken);
 * ```
 */
export type FetchToken = (options: { forceRefresh: boolean }) => Promise<string | null | undefined>;

/**
 * Options of {@link TokenManager}: how early a token counts as expired, retry backoff, and
 * callbacks for refreshes and failed fetches.
 * @example
 * ```ts
 * const options: TokenManagerOptions = {
 *   expiryMarginMs: 30_000,
 *   onFetchError: (error, attempt) => console.warn(`token fetch failed (attempt ${attempt})`, error),
 * };
 * const backend = new BackendClient("wss://example.com/api/sync", { token: options });
 * ```
 */
export interface TokenManagerOptions {
  /** A token counts as expired this long before its `exp` (default 60 000 ms, requirements §3.2). */
  expiryMarginMs?: number;
  /** Backoff of retries after a failed fetch (defaults 250 ms doubling up to 30 s, with jitter). */
  retryInitialDelayMs?: number;
  retryMaxDelayMs?: number;
  /** A scheduled (ahead-of-time) refresh produced a new token, or null: the session ended. */
  onRefresh?: (token: string | null) => void;
  /** A fetch failed and will be retried (for logging). */
  onFetchError?: (error: unknown, attempt: number) => void;
}

/**
 * `exp` and `iat` of a JWT in seconds, read without verifying (the server verifies).
 * @example
 * ```ts
 * const { exp, iat } = decodeJwtTimes(token);
 * const lifetimeSeconds = exp !== undefined && iat !== undefined ? exp - iat : undefined;
 * ```
 */
export function decodeJwtTimes(token: string): { exp?: number; iat?: number } {
  try {
    const part = token.split(".")[1];
    if (!part) return {};
    const b64 = part
      .replace(/-/g, "+")
      .replace(/_/g, "/")
      .padEnd(Math.ceil(part.length / 4) * 4, "=");
    const payload = JSON.parse(atob(b64)) as { exp?: unknown; iat?: unknown };
    return {
      exp: typeof payload.exp === "number" ? payload.exp : undefined,
      iat: typeof payload.iat === "number" ? payload.iat : undefined,
    };
  } catch {
    return {};
  }
}

/**
 * Caches a JWT and refreshes it ahead of its expiry: concurrent requests share one fetch, a null
 * result means signed out, and a thrown fetch is retried with backoff.
 * @example
 * ```ts
 * const tokens = new TokenManager(() => authClient.backend.getToken(), {
 *   onRefresh: (token) => token === null && showSignIn(),
 * });
 * const token = await tokens.getToken();
 * await fetch("/api/me", { headers: { authorization: `Bearer ${token}` } });
 * tokens.stop(); // on sign-out
 * ```
 */
export class TokenManager {
  private token: string | null = null;
  /** When the cached token stops counting as fresh (ms since epoch). */
  private staleAt = 0;
  private inflight: Promise<string | null> | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Bumped by `stop()` so retry loops and timers of an old session end. */
  private generation = 0;
  private readonly margin: number;

  constructor(
    private readonly fetchToken: FetchToken,
    private readonly options: TokenManagerOptions = {},
  ) {
    this.margin = options.expiryMarginMs ?? 60_000;
  }

  /** The cached token while fresh, else a fetched one; null when signed out. */
  getToken(): Promise<string | null> {
    if (this.token && Date.now() < this.staleAt) return Promise.resolve(this.token);
    return this.fetch(false);
  }

  /** A new token from the endpoint (e.g. after the server refused the current one). */
  refresh(): Promise<string | null> {
    return this.fetch(true);
  }

  /** Forgets the token and cancels scheduled refreshes and pending retries. */
  stop(): void {
    this.generation++;
    this.token = null;
    this.staleAt = 0;
    this.inflight = null;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private fetch(forceRefresh: boolean): Promise<string | null> {
    // One fetch at a time: concurrent callers share it.
    this.inflight ??= this.fetchWithRetry(forceRefresh, this.generation).finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  private async fetchWithRetry(forceRefresh: boolean, generation: number): Promise<string | null> {
    const policy: BackoffPolicy = {
      ...FETCH_RETRY,
      firstMs: this.options.retryInitialDelayMs ?? FETCH_RETRY.firstMs,
      maxMs: this.options.retryMaxDelayMs ?? FETCH_RETRY.maxMs,
    };
    for (let attempt = 0; ; attempt++) {
      try {
        const token = (await this.fetchToken({ forceRefresh })) ?? null;
        if (generation !== this.generation) return null;
        this.accept(token);
        return token;
      } catch (error) {
        if (generation !== this.generation) return null;
        this.options.onFetchError?.(error, attempt);
        await new Promise((resolve) => setTimeout(resolve, backoffDelayMs(policy, attempt)));
        if (generation !== this.generation) return null;
      }
    }
  }

  private accept(token: string | null): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.token = token;
    if (!token) {
      this.staleAt = 0;
      return;
    }
    const { exp, iat } = decodeJwtTimes(token);
    if (exp === undefined) {
      // Unknown lifetime: use it, and ask again next time.
      this.staleAt = 0;
      return;
    }
    // Tokens shorter-lived than twice the margin refresh at half their lifetime instead of looping.
    const lifetime = iat !== undefined ? (exp - iat) * 1000 : Number.POSITIVE_INFINITY;
    const margin = Math.min(this.margin, lifetime / 2);
    this.staleAt = exp * 1000 - margin;
    const generation = this.generation;
    const timer = setTimeout(
      () => {
        if (generation !== this.generation) return;
        void this.fetch(true).then((t) => {
          if (generation === this.generation) this.options.onRefresh?.(t);
        });
      },
      // At least a second apart, so a token that is stale on arrival (clock skew) cannot loop.
      Math.max(1000, this.staleAt - Date.now()),
    );
    (timer as { unref?: () => void }).unref?.();
    this.timer = timer;
  }
}
