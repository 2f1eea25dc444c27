/**
 * Helpers of the live tests: a {@link BackendClient} on the real example app whose `fetchToken`
 * calls the real token endpoint with a browser's cookie jar, recording every server message, every
 * token response and every isAuthenticated change.
 */
import WebSocket from "ws";
import { BackendClient, type BackendError } from "../../src/client/index.ts";
import type { Browser } from "./example-app.ts";

export interface LiveClient {
  client: BackendClient;
  /** Every server message, in arrival order (across reconnects). */
  received: any[];
  /** Status of every token endpoint response `fetchToken` got. */
  tokenStatuses: number[];
  /** Every `onChange(isAuthenticated)` report. */
  authChanges: boolean[];
}

/** `fetchToken` over `GET /api/auth/backend/token`: 200 → JWT, 401/403 → null (signed out), else throw. */
export function tokenFetcher(browser: Browser, statuses: number[] = []) {
  return async (): Promise<string | null> => {
    const res = await browser.token();
    statuses.push(res.status);
    if (res.status === 200 && res.body?.token) return res.body.token;
    if (res.status === 401 || res.status === 403) return null;
    throw new Error(`token endpoint answered ${res.status}`);
  };
}

const open: BackendClient[] = [];

/** A client of `url`, authenticated through `browser` when given. Close with {@link closeClients}. */
export function liveClient(url: string, browser?: Browser): LiveClient {
  const received: any[] = [];
  class RecordingWebSocket extends WebSocket {
    constructor(address: string) {
      super(address);
      this.on("message", (data) => received.push(JSON.parse(String(data))));
    }
  }
  const client = new BackendClient(url, {
    WebSocket: RecordingWebSocket as any,
    reconnectInitialDelayMs: 50,
    reconnectMaxDelayMs: 300,
  });
  open.push(client);
  const out: LiveClient = { client, received, tokenStatuses: [], authChanges: [] };
  if (browser) client.setAuth(tokenFetcher(browser, out.tokenStatuses), (v) => out.authChanges.push(v));
  return out;
}

/** Closes every client made by {@link liveClient} so far. */
export function closeClients(): void {
  for (const c of open.splice(0)) c.close();
}

/** A subscription's values and errors. */
export function watch(client: BackendClient, ref: any, args: Record<string, unknown> = {}) {
  const values: any[] = [];
  const errors: BackendError[] = [];
  const stop = client.subscribe(
    ref,
    args,
    (v) => values.push(v),
    (e) => errors.push(e),
  );
  return { values, errors, stop, last: () => values[values.length - 1] };
}
