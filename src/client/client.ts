/**
 * The framework-free backend client (browser and Node): one WebSocket to `/api/sync` carrying
 * live queries, one-shot queries, mutations and actions; reconnects with backoff and restores
 * its subscriptions; keeps the JWT fresh through a {@link TokenManager}.
 * Browser-safe: uses the global `WebSocket` unless a constructor is passed (e.g. `ws` in Node 20).
 */
import type { FunctionReference } from "../backend/functions/references.ts";
import { functionPath, queryKey } from "./function-path.ts";
import { type FetchToken, TokenManager, type TokenManagerOptions } from "./token-manager.ts";

/** The subset of the WebSocket API the client uses (browser `WebSocket` and `ws` both fit). */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: any) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: any) => void) | null;
}
export type WebSocketConstructor = new (url: string) => WebSocketLike;

/** An error reported by the backend (or the connection), with a stable `code`. */
export class BackendError extends Error {
  readonly code: string;
  readonly data?: unknown;
  constructor(code: string, message: string, data?: unknown) {
    super(message);
    this.name = "BackendError";
    this.code = code;
    this.data = data;
  }
}

export type ConnectionState = "connecting" | "open" | "reconnecting" | "closed";

export interface BackendClientOptions {
  /** WebSocket implementation; default `globalThis.WebSocket` (pass `ws`'s in Node 20). */
  WebSocket?: WebSocketConstructor;
  /** Reconnect backoff: first delay and cap (defaults 100 ms and 10 s), with jitter. */
  reconnectInitialDelayMs?: number;
  reconnectMaxDelayMs?: number;
  /** Token management (see {@link TokenManagerOptions}). */
  token?: Omit<TokenManagerOptions, "onRefresh">;
  onConnectionChange?: (state: ConnectionState) => void;
}

type QueryRef = FunctionReference<"query", "public", any, any>;
type MutationRef = FunctionReference<"mutation", "public", any, any>;
type ActionRef = FunctionReference<"action", "public", any, any>;

interface Listener {
  onUpdate: (value: any) => void;
  onError?: (error: BackendError) => void;
}

/** One server-side subscription, shared by every local listener of the same (path, args). */
interface LiveQuery {
  id: number;
  key: string;
  path: string;
  args: Record<string, unknown>;
  listeners: Set<Listener>;
  hasValue: boolean;
  value: unknown;
  /** Whether the current socket holds this subscription. */
  onServer: boolean;
}

interface Pending {
  kind: "query" | "mutation" | "action";
  text: string;
  sent: boolean;
  resolve: (value: any) => void;
  reject: (error: BackendError) => void;
}

/** Codes that mean "your credentials are not accepted" (as opposed to a failing function). */
const AUTH_CODES = new Set(["UNAUTHORIZED", "ACCOUNT_BANNED"]);

/** `http(s)://host[/base]` or `ws(s)://…/api/sync` → the sync endpoint URL. */
function syncUrl(url: string): string {
  let u = url.replace(/^http/, "ws").replace(/\/+$/, "");
  if (!u.endsWith("/api/sync")) u += "/api/sync";
  return u;
}

export class BackendClient {
  private readonly url: string;
  private readonly WS: WebSocketConstructor;
  private ws: WebSocketLike | null = null;
  private state: ConnectionState = "connecting";
  /** Connected and authentication settled: requests and subscriptions can be sent. */
  private ready = false;
  private readonly live = new Map<string, LiveQuery>();
  private readonly liveById = new Map<number, LiveQuery>();
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private attempt = 0;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  private lastMessageAt = 0;
  private idleTimeoutMs = 60_000;
  private auth: { manager: TokenManager; onChange?: (isAuthenticated: boolean) => void } | null = null;
  /** Bumped whenever auth is set or cleared, so late token fetches of an old setting are dropped. */
  private authGeneration = 0;
  private authenticated = false;
  /** One forced refresh per auth error; a second refusal in a row is a sign-out. */
  private refreshedForAuthError = false;
  /** The token sent in the last `connect` message. */
  private connectToken: string | null = null;

  constructor(
    url: string,
    private readonly options: BackendClientOptions = {},
  ) {
    this.url = syncUrl(url);
    const WS = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (!WS)
      throw new Error("No WebSocket implementation: pass options.WebSocket (e.g. from the ws package)");
    this.WS = WS;
    this.connect();
  }

  /** Whether the server accepted the current token. */
  get isAuthenticated(): boolean {
    return this.authenticated;
  }

  get connectionState(): ConnectionState {
    return this.state;
  }

  // ------------------------------------------------------------------------------ public API

  /**
   * Subscribes to a query: `onUpdate` gets the current result and every changed result after it;
   * `onError` gets the query's errors (the subscription stays and recovers when the query does)
   * and a final error when the subscription is stopped (sign-out, limit). Returns an unsubscribe.
   */
  subscribe<Q extends QueryRef>(
    ref: Q | string,
    args: Q["_args"],
    onUpdate: (value: Q["_returns"]) => void,
    onError?: (error: BackendError) => void,
  ): () => void {
    const path = functionPath(ref);
    const a = (args ?? {}) as Record<string, unknown>;
    const key = queryKey(path, a);
    const listener: Listener = { onUpdate, onError };
    let q = this.live.get(key);
    if (!q) {
      q = {
        id: this.nextId++,
        key,
        path,
        args: a,
        listeners: new Set(),
        hasValue: false,
        value: undefined,
        onServer: false,
      };
      this.live.set(key, q);
      this.liveById.set(q.id, q);
      if (this.ready) this.sendSubscribe(q);
    } else if (q.hasValue) {
      const value = q.value;
      queueMicrotask(() => listener.onUpdate(value));
    }
    q.listeners.add(listener);
    const live = q;
    return () => {
      live.listeners.delete(listener);
      if (live.listeners.size > 0 || this.live.get(key) !== live) return;
      this.live.delete(key);
      this.liveById.delete(live.id);
      if (live.onServer) this.send({ type: "unsubscribe", id: live.id });
    };
  }

  /** Alias of {@link subscribe}. */
  onUpdate<Q extends QueryRef>(
    ref: Q | string,
    args: Q["_args"],
    callback: (value: Q["_returns"]) => void,
    onError?: (error: BackendError) => void,
  ): () => void {
    return this.subscribe(ref, args, callback, onError);
  }

  /** Runs a query once. */
  query<Q extends QueryRef>(ref: Q | string, args: Q["_args"]): Promise<Q["_returns"]> {
    return this.request("query", functionPath(ref), args);
  }

  /** Runs a mutation; resolves after this client's subscriptions show its writes. */
  mutation<M extends MutationRef>(ref: M | string, args: M["_args"]): Promise<M["_returns"]> {
    return this.request("mutation", functionPath(ref), args);
  }

  action<A extends ActionRef>(ref: A | string, args: A["_args"]): Promise<A["_returns"]> {
    return this.request("action", functionPath(ref), args);
  }

  /**
   * Authenticates with tokens from `fetchToken` (null: signed out; throw: transient failure,
   * retried). `onChange` reports isAuthenticated as the server confirms or ends it.
   */
  setAuth(fetchToken: FetchToken, onChange?: (isAuthenticated: boolean) => void): void {
    this.auth?.manager.stop();
    const generation = ++this.authGeneration;
    const manager = new TokenManager(fetchToken, {
      ...this.options.token,
      onRefresh: (token) => {
        if (generation !== this.authGeneration) return;
        if (token === null) this.signedOut(new BackendError("UNAUTHORIZED", "Session ended"));
        else if (this.ready) this.send({ type: "authenticate", token });
      },
    });
    this.auth = { manager, onChange };
    this.refreshedForAuthError = false;
    if (this.ws && this.ws.readyState === 1 && this.state === "open") void this.reauthenticate(false);
  }

  /** Drops the credentials; live queries continue as an anonymous caller. */
  clearAuth(): void {
    this.auth?.manager.stop();
    this.setAuthenticated(false);
    this.auth = null;
    this.authGeneration++;
    if (this.state === "open") this.send({ type: "authenticate", token: null });
  }

  /** Closes the connection for good; pending requests fail with CONNECTION_CLOSED. */
  close(): void {
    this.state = "closed";
    this.auth?.manager.stop();
    clearTimeout(this.reconnectTimer);
    clearInterval(this.heartbeat);
    const ws = this.ws;
    this.ws = null;
    ws?.close(1000, "client closed");
    for (const p of this.pending.values()) p.reject(new BackendError("CONNECTION_CLOSED", "Client closed"));
    this.pending.clear();
    this.options.onConnectionChange?.("closed");
  }

  // ------------------------------------------------------------------------------ connection

  private connect(): void {
    if (this.state === "closed") return;
    // The token is fetched while the socket opens, not after.
    const authAtStart = this.auth;
    const early = authAtStart ? authAtStart.manager.getToken() : null;
    const ws = new this.WS(this.url);
    this.ws = ws;
    ws.onopen = () => void this.handshake(ws, authAtStart, early);
    ws.onmessage = (event) => {
      if (this.ws !== ws) return;
      this.lastMessageAt = Date.now();
      let message: any;
      try {
        message = JSON.parse(typeof event.data === "string" ? event.data : String(event.data));
      } catch {
        return;
      }
      this.onMessage(message);
    };
    ws.onerror = () => {};
    ws.onclose = (event) => {
      if (this.ws !== ws) return;
      this.onDisconnect(event.code, event.reason);
    };
  }

  private async handshake(
    ws: WebSocketLike,
    authAtStart: BackendClient["auth"],
    early: Promise<string | null> | null,
  ): Promise<void> {
    let auth = this.auth;
    let token: string | null = null;
    while (auth) {
      token = await (auth === authAtStart && early ? early : auth.manager.getToken());
      if (this.auth === auth) break;
      auth = this.auth; // auth changed while the token was fetched: use the new setting
    }
    if (this.ws !== ws || ws.readyState !== 1) return;
    if (auth && token === null) this.signedOut(new BackendError("UNAUTHORIZED", "Not signed in"), false);
    this.connectToken = token;
    this.lastMessageAt = Date.now();
    ws.send(JSON.stringify({ type: "connect", v: 1, token }));
  }

  private onDisconnect(code: number, reason: string): void {
    this.ws = null;
    this.ready = false;
    clearInterval(this.heartbeat);
    for (const q of this.live.values()) q.onServer = false;
    // Mutations and actions already sent may or may not have run: fail them rather than repeat them.
    for (const [id, p] of this.pending) {
      if (p.sent && p.kind !== "query") {
        this.pending.delete(id);
        p.reject(new BackendError("CONNECTION_LOST", `Connection lost before the ${p.kind} result arrived`));
      } else {
        p.sent = false;
      }
    }
    if (this.state === "closed") return;
    if (code === 4001) {
      // Protocol version mismatch: retrying cannot help.
      this.close();
      for (const q of this.live.values())
        this.notifyError(q, new BackendError("UNSUPPORTED_VERSION", reason));
      return;
    }
    this.state = "reconnecting";
    this.options.onConnectionChange?.("reconnecting");
    const initial = this.options.reconnectInitialDelayMs ?? 100;
    const max = this.options.reconnectMaxDelayMs ?? 10_000;
    const delay = Math.min(max, initial * 2 ** this.attempt++) * (0.5 + Math.random() / 2);
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
  }

  private startHeartbeat(): void {
    clearInterval(this.heartbeat);
    const every = Math.max(1000, Math.floor(this.idleTimeoutMs / 3));
    this.heartbeat = setInterval(() => {
      if (!this.ws) return;
      // The server answers every ping: silence this long means the connection is dead.
      if (Date.now() - this.lastMessageAt > this.idleTimeoutMs) {
        const ws = this.ws;
        this.onDisconnect(4008, "server silent");
        ws.close();
        return;
      }
      this.send({ type: "ping" });
    }, every);
    (this.heartbeat as { unref?: () => void }).unref?.();
  }

  private send(message: Record<string, unknown>): void {
    if (this.ws && this.ws.readyState === 1) this.ws.send(JSON.stringify(message));
  }

  private sendSubscribe(q: LiveQuery): void {
    q.onServer = true;
    this.send({ type: "subscribe", id: q.id, path: q.path, args: q.args });
  }

  /** Authentication settled: (re)send subscriptions and queued requests. */
  private becomeReady(): void {
    this.ready = true;
    for (const q of this.live.values()) if (!q.onServer) this.sendSubscribe(q);
    for (const p of this.pending.values()) {
      if (!p.sent && this.ws?.readyState === 1) {
        p.sent = true;
        this.ws.send(p.text);
      }
    }
  }

  private request(kind: Pending["kind"], path: string, args: unknown): Promise<any> {
    if (this.state === "closed")
      return Promise.reject(new BackendError("CONNECTION_CLOSED", "Client closed"));
    const id = this.nextId++;
    const text = JSON.stringify({ type: kind, id, path, args: args ?? {} });
    return new Promise((resolve, reject) => {
      const p: Pending = { kind, text, sent: false, resolve, reject };
      this.pending.set(id, p);
      if (this.ready && this.ws?.readyState === 1) {
        p.sent = true;
        this.ws.send(text);
      }
    });
  }

  // ------------------------------------------------------------------------------ messages

  private onMessage(m: any): void {
    switch (m?.type) {
      case "connected":
        this.attempt = 0;
        this.state = "open";
        this.options.onConnectionChange?.("open");
        if (typeof m.idleTimeoutMs === "number" && m.idleTimeoutMs > 0) this.idleTimeoutMs = m.idleTimeoutMs;
        this.startHeartbeat();
        if (m.authenticated) {
          this.refreshedForAuthError = false;
          this.setAuthenticated(true);
          this.becomeReady();
        } else if (!this.auth) {
          this.becomeReady();
        } else if (this.connectToken === null) {
          void this.reauthenticate(false); // auth was set after the connect message went out
        }
        // Otherwise an auth_error follows.
        return;
      case "authenticated":
        if (m.authenticated) {
          this.refreshedForAuthError = false;
          this.setAuthenticated(true);
        }
        this.becomeReady();
        return;
      case "auth_error": {
        // The server stopped every subscription of this connection.
        this.ready = false;
        for (const q of this.live.values()) q.onServer = false;
        void this.onAuthError(
          new BackendError(m.code ?? "UNAUTHORIZED", m.message ?? "Unauthorized", m.data),
        );
        return;
      }
      case "update": {
        const q = this.liveById.get(m.id);
        if (!q) return;
        if (m.error) {
          this.notifyError(q, new BackendError(m.error.code, m.error.message, m.error.data));
          return;
        }
        q.hasValue = true;
        q.value = m.value;
        for (const l of [...q.listeners]) l.onUpdate(m.value);
        return;
      }
      case "result": {
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        if (m.error) {
          const error = new BackendError(m.error.code, m.error.message, m.error.data);
          if (AUTH_CODES.has(error.code) && this.auth && !this.ready) {
            // Refused while re-authenticating: send it again once authenticated.
            p.sent = false;
            this.pending.set(m.id, p);
            return;
          }
          p.reject(error);
        } else {
          p.resolve(m.value);
        }
        return;
      }
      case "error": {
        if (m.id === undefined) return;
        const error = new BackendError(m.code, m.message, m.data);
        const p = this.pending.get(m.id);
        if (p) {
          this.pending.delete(m.id);
          p.reject(error);
          return;
        }
        const q = this.liveById.get(m.id);
        if (!q) return;
        q.onServer = false;
        // Refused because authentication is being renewed: it is resubscribed afterwards.
        if (AUTH_CODES.has(error.code) && this.auth && !this.ready) return;
        this.notifyError(q, error);
        this.live.delete(q.key);
        this.liveById.delete(q.id);
        return;
      }
      default:
        return; // pong, or a newer server's message this client does not know
    }
  }

  private notifyError(q: LiveQuery, error: BackendError): void {
    for (const l of [...q.listeners]) l.onError?.(error);
  }

  /** The server refused our credentials: force one refresh, else we are signed out. */
  private async onAuthError(error: BackendError): Promise<void> {
    if (!this.auth) {
      // Not using auth: continue anonymously.
      this.send({ type: "authenticate", token: null });
      return;
    }
    if (this.refreshedForAuthError) {
      this.signedOut(error);
      return;
    }
    this.refreshedForAuthError = true;
    await this.reauthenticate(true, error);
  }

  private async reauthenticate(force: boolean, cause?: BackendError): Promise<void> {
    const auth = this.auth;
    if (!auth) return;
    const generation = this.authGeneration;
    const token = await (force ? auth.manager.refresh() : auth.manager.getToken());
    if (generation !== this.authGeneration || this.state === "closed") return;
    if (token === null) {
      this.signedOut(cause ?? new BackendError("UNAUTHORIZED", "Not signed in"));
      return;
    }
    this.send({ type: "authenticate", token });
  }

  /**
   * Signed out (the token endpoint said 401, or a fresh token was refused too): report
   * isAuthenticated false and stop every live query — the client cannot tell which ones need
   * auth — with `error`; the connection continues anonymously.
   */
  private signedOut(error: BackendError, tellServer = true): void {
    this.auth?.manager.stop();
    this.authGeneration++;
    const onChange = this.auth?.onChange;
    this.auth = null;
    this.refreshedForAuthError = false;
    const queries = [...this.live.values()];
    this.live.clear();
    this.liveById.clear();
    for (const q of queries) {
      if (q.onServer) this.send({ type: "unsubscribe", id: q.id });
      this.notifyError(q, error);
    }
    // Reported even when never authenticated: the app learns "signed out" either way.
    this.authenticated = false;
    onChange?.(false);
    if (tellServer) this.send({ type: "authenticate", token: null });
  }

  private setAuthenticated(value: boolean): void {
    if (this.authenticated === value) return;
    this.authenticated = value;
    this.auth?.onChange?.(value);
  }
}
