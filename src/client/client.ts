/**
 * The framework-free backend client (browser and Node): one WebSocket to `/api/sync` carrying
 * live queries, one-shot queries, mutations and actions; reconnects with backoff and restores
 * its subscriptions; keeps the JWT fresh through a `TokenManager`.
 * Browser-safe: uses the global `WebSocket` (browsers, Node.js 22 and later) unless a constructor is
 * passed (e.g. the `ws` package's, to record or shape frames).
 *
 * This module composes the parts and routes the server's messages to them: the socket
 * ({@link Transport}), the live queries ({@link LiveQueries}), the calls awaiting a result
 * ({@link PendingRequests}) and the authentication ({@link AuthState}).
 */
import type { FunctionReference } from "../backend/functions/references.ts";
import type { CallKind, ServerMessage } from "../protocol/messages.ts";
import { AuthState } from "./auth-state.ts";
import { BackendError, fromWire } from "./backend-error.ts";
import { functionPath } from "./function-path.ts";
import { LiveQueries } from "./live-queries.ts";
import type { Outbox } from "./outbox.ts";
import { PendingRequests } from "./pending-requests.ts";
import type { FetchToken, TokenManagerOptions } from "./token-manager.ts";
import { type ConnectionState, syncUrl, Transport, type WebSocketConstructor } from "./transport.ts";

export { BackendError } from "./backend-error.ts";
export type { ConnectionState, WebSocketConstructor, WebSocketLike } from "./transport.ts";

/**
 * Options of {@link BackendClient}: the WebSocket implementation, reconnect backoff, token
 * refresh settings and a connection-state callback.
 * @example
 * ```ts
 * const options: BackendClientOptions = {
 *   reconnectMaxDelayMs: 5_000,
 *   onConnectionChange: (state) => console.log("connection:", state),
 * };
 * const backend = new BackendClient("https://api.example.com", options);
 * ```
 */
export interface BackendClientOptions {
  /** WebSocket implementation; default `globalThis.WebSocket` (browsers, Node.js 22 and later). */
  WebSocket?: WebSocketConstructor;
  /** Reconnect backoff: first delay and cap (defaults 100 ms and 10 s), with jitter. */
  reconnectInitialDelayMs?: number;
  reconnectMaxDelayMs?: number;
  /** Token management (see {@link TokenManagerOptions}). */
  token?: Omit<TokenManagerOptions, "onRefresh">;
  onConnectionChange?: (state: ConnectionState) => void;
  /**
   * Open the socket at the first subscription, call or `setAuth` instead of in the constructor.
   * For a client made during a render: React may throw a render away and make another client,
   * and a socket opened by the discarded one would stay open for nothing. Default false.
   */
  lazyConnect?: boolean;
}

type QueryRef = FunctionReference<"query", "public", any, any>;
type MutationRef = FunctionReference<"mutation", "public", any, any>;
type ActionRef = FunctionReference<"action", "public", any, any>;

/**
 * The framework-free backend client: one WebSocket to `/api/sync` carrying live queries, one-shot
 * queries, mutations and actions; it reconnects with backoff and keeps the JWT fresh.
 * @example
 * ```ts
 * import { createAuthClient } from "better-auth/client";
 * import { BackendClient, backendClient } from "service-auth/client";
 *
 * const authClient = createAuthClient({ baseURL: location.origin, plugins: [backendClient()] });
 * const backend = new BackendClient("wss://example.com/api/sync");
 * backend.setAuth(() => authClient.backend.getToken(), (isAuthenticated) => render(isAuthenticated));
 * const stop = backend.subscribe(api.messages.list, {}, (messages) => render(messages));
 * await backend.mutation(api.messages.send, { body: "hello" });
 * ```
 */
export class BackendClient {
  private readonly transport: Transport;
  private readonly live: LiveQueries;
  private readonly requests: PendingRequests;
  private readonly auth: AuthState;
  /** Connected and authentication settled: requests and subscriptions can be sent. */
  private ready = false;
  /** Subscription and request ids come from one counter: an `error` message can name either. */
  private nextId = 1;
  /** The transport was asked to connect (at construction, or at first use with `lazyConnect`). */
  private started = false;

  constructor(url: string, options: BackendClientOptions = {}) {
    const WS = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (!WS)
      throw new Error("No WebSocket implementation: pass options.WebSocket (e.g. from the ws package)");
    const client = this;
    const outbox: Outbox = {
      get ready() {
        return client.ready;
      },
      send: (message) => this.transport.send(message),
      sendText: (text) => this.transport.sendText(text),
    };
    const ids = () => this.nextId++;
    this.live = new LiveQueries(outbox, ids);
    this.requests = new PendingRequests(outbox, ids);
    this.auth = new AuthState(options.token, {
      outbox,
      get isClosed() {
        return client.transport.state === "closed";
      },
      stopLiveQueries: (error) => this.live.stopAll(error),
    });
    this.transport = new Transport(
      syncUrl(url),
      {
        WebSocket: WS,
        reconnectInitialDelayMs: options.reconnectInitialDelayMs,
        reconnectMaxDelayMs: options.reconnectMaxDelayMs,
        onConnectionChange: options.onConnectionChange,
      },
      {
        connecting: () => {
          const prefetched = this.auth.prefetch();
          return (link) => void this.auth.sendConnect(link, prefetched);
        },
        message: (message) => this.onMessage(message),
        disconnected: () => {
          this.ready = false;
          this.live.detachAll();
          this.requests.connectionLost();
        },
        unsupportedVersion: (reason) => {
          this.close();
          this.live.failAll(new BackendError("UNSUPPORTED_VERSION", reason));
        },
      },
    );
    if (!options.lazyConnect) this.start();
  }

  /** Whether the server accepted the current token. */
  get isAuthenticated(): boolean {
    return this.auth.isAuthenticated;
  }

  get connectionState(): ConnectionState {
    return this.transport.state;
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
    this.start();
    return this.live.listen(functionPath(ref), (args ?? {}) as Record<string, unknown>, {
      onUpdate,
      onError,
    });
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
    this.auth.set(fetchToken, onChange);
    this.start();
    if (this.transport.isOpen && this.transport.state === "open") void this.auth.renew(false);
  }

  /** Drops the credentials; live queries continue as an anonymous caller. */
  clearAuth(): void {
    this.auth.clear();
    if (this.transport.state === "open") this.transport.send({ type: "authenticate", token: null });
  }

  /** Closes the connection for good; pending requests fail with CONNECTION_CLOSED. */
  close(): void {
    this.auth.stop();
    this.transport.close();
    this.requests.rejectAll(new BackendError("CONNECTION_CLOSED", "Client closed"));
  }

  // ------------------------------------------------------------------------------ internals

  private request(kind: CallKind, path: string, args: unknown): Promise<any> {
    if (this.transport.state === "closed")
      return Promise.reject(new BackendError("CONNECTION_CLOSED", "Client closed"));
    this.start();
    return this.requests.request(kind, path, args);
  }

  /** Opens the socket once; later drops are the transport's to reconnect. */
  private start(): void {
    if (this.started) return;
    this.started = true;
    this.transport.connect();
  }

  /** Authentication settled: (re)send subscriptions and queued requests. */
  private becomeReady(): void {
    this.ready = true;
    this.live.resubscribe();
    this.requests.sendQueued();
  }

  /** A credential refusal now may be the old token's: the call or subscription is sent again. */
  private get renewingAuth(): boolean {
    return this.auth.active && !this.ready;
  }

  private onMessage(m: ServerMessage): void {
    switch (m.type) {
      case "connected":
        this.transport.established(m.idleTimeoutMs);
        if (this.auth.connected(m.authenticated)) this.becomeReady();
        return;
      case "authenticated":
        this.auth.authenticatedReply(m.authenticated);
        this.becomeReady();
        return;
      case "auth_error":
        // The server stopped every subscription of this connection.
        this.ready = false;
        this.live.detachAll();
        void this.auth.refused(
          new BackendError(m.code ?? "UNAUTHORIZED", m.message ?? "Unauthorized", m.data),
        );
        return;
      case "update":
        this.live.update(m);
        return;
      case "result":
        this.requests.result(m, this.renewingAuth);
        return;
      case "error": {
        if (m.id === undefined) return;
        const error = fromWire(m);
        if (!this.requests.refused(m.id, error)) this.live.refused(m.id, error, this.renewingAuth);
        return;
      }
      case "pong":
        return;
      default:
        // A newer server's message type: ignored (docs/protocol.md). `never`: every known one is handled.
        m satisfies never;
    }
  }
}
