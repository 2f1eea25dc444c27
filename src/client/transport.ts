/**
 * The client's socket: one WebSocket to `/api/sync` at a time, reconnected with exponential
 * backoff, kept alive by a heartbeat that also detects a silent (dead) server. It knows the close
 * codes, not the conversation: messages go to and come from the {@link TransportEvents}.
 */
import { type BackoffPolicy, backoffDelayMs } from "../protocol/backoff.ts";
import { CloseCode } from "../protocol/close-codes.ts";
import type { ClientMessage, ServerMessage } from "../protocol/messages.ts";

/**
 * The subset of the WebSocket API the client uses (browser `WebSocket` and `ws` both fit).
 * @example
 * ```ts
 * // Any socket with this shape can back a BackendClient, e.g. a wrapper around a platform socket.
 * function connect(url: string): WebSocketLike {
 *   return new WebSocket(url);
 * }
 * ```
 */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: any) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: any) => void) | null;
}
/**
 * A constructor of {@link WebSocketLike} sockets: the global `WebSocket` (browsers, Node.js 22 and
 * later), or another with its interface, such as the `ws` package's.
 * @example
 * ```ts
 * import WebSocket from "ws";
 *
 * const Socket: WebSocketConstructor = WebSocket;
 * const backend = new BackendClient("https://api.example.com", { WebSocket: Socket });
 * ```
 */
export type WebSocketConstructor = new (url: string) => WebSocketLike;

/**
 * The client's connection: opening, open, reopening after a drop, or closed for good.
 * @example
 * ```ts
 * const backend = new BackendClient("wss://example.com/api/sync", {
 *   onConnectionChange: (state: ConnectionState) => {
 *     banner.hidden = state === "open";
 *   },
 * });
 * ```
 */
export type ConnectionState = "connecting" | "open" | "reconnecting" | "closed";

const OPEN = 1;

/** `http(s)://host[/base]` or `ws(s)://…/api/sync` → the sync endpoint URL. */
export function syncUrl(url: string): string {
  let u = url.replace(/^http/, "ws").replace(/\/+$/, "");
  if (!u.endsWith("/api/sync")) u += "/api/sync";
  return u;
}

/** A socket that has opened, as its handshake sees it. */
export interface Link {
  /** Whether this socket is still the client's socket, and open. */
  isCurrent(): boolean;
  send(message: ClientMessage): void;
}

/** What the transport reports to the client. */
export interface TransportEvents {
  /**
   * A socket is being created. Returns what to do once it is open (the handshake), so the
   * handshake can start its slow part (fetching a token) while the socket opens.
   */
  connecting(): (link: Link) => void;
  message(message: ServerMessage): void;
  /** The socket is gone: nothing sent on it will be answered. */
  disconnected(): void;
  /** The server does not speak this client's protocol version (4001); the transport gives up. */
  unsupportedVersion(reason: string): void;
}

/** Reconnecting after the socket closed; the options may change first wait and cap. */
const RECONNECT: BackoffPolicy = { firstMs: 100, maxMs: 10_000, jitter: "equal" };

export interface TransportOptions {
  WebSocket: WebSocketConstructor;
  /** Reconnect backoff: first delay and cap (defaults 100 ms and 10 s), with ±50 % jitter. */
  reconnectInitialDelayMs?: number;
  reconnectMaxDelayMs?: number;
  onConnectionChange?: (state: ConnectionState) => void;
}

export class Transport {
  private ws: WebSocketLike | null = null;
  private connectionState: ConnectionState = "connecting";
  private attempt = 0;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  private lastMessageAt = 0;
  /** The server's idle timeout (from `connected`; the last one announced stays in force). */
  private idleTimeoutMs = 60_000;

  constructor(
    private readonly url: string,
    private readonly options: TransportOptions,
    private readonly events: TransportEvents,
  ) {}

  get state(): ConnectionState {
    return this.connectionState;
  }

  /** Whether a socket is open (handshake done or not). */
  get isOpen(): boolean {
    return this.ws !== null && this.ws.readyState === OPEN;
  }

  /** Opens a socket (at construction, then after each drop). */
  connect(): void {
    if (this.connectionState === "closed") return;
    const onOpen = this.events.connecting();
    const ws = new this.options.WebSocket(this.url);
    this.ws = ws;
    const link: Link = {
      isCurrent: () => this.ws === ws && ws.readyState === OPEN,
      send: (message) => ws.send(JSON.stringify(message)),
    };
    ws.onopen = () => onOpen(link);
    ws.onmessage = (event) => {
      if (this.ws !== ws) return;
      this.lastMessageAt = Date.now();
      let message: unknown;
      try {
        message = JSON.parse(typeof event.data === "string" ? event.data : String(event.data));
      } catch {
        return;
      }
      // The shape is the server's promise; anything without a type cannot be one of its messages.
      const type = (message as { type?: unknown } | null)?.type;
      if (typeof type === "string") this.events.message(message as ServerMessage);
    };
    ws.onerror = () => {};
    ws.onclose = (event) => {
      if (this.ws !== ws) return;
      this.dropped(event.code, event.reason);
    };
  }

  /** The handshake finished (`connected`): reset the backoff and start the heartbeat. */
  established(idleTimeoutMs: number | undefined): void {
    this.attempt = 0;
    this.connectionState = "open";
    this.options.onConnectionChange?.("open");
    if (typeof idleTimeoutMs === "number" && idleTimeoutMs > 0) this.idleTimeoutMs = idleTimeoutMs;
    this.startHeartbeat();
  }

  send(message: ClientMessage): boolean {
    return this.sendText(JSON.stringify(message));
  }

  sendText(text: string): boolean {
    if (!this.ws || this.ws.readyState !== OPEN) return false;
    this.ws.send(text);
    return true;
  }

  /** Closes for good: no reconnect. */
  close(): void {
    this.connectionState = "closed";
    clearTimeout(this.reconnectTimer);
    clearInterval(this.heartbeat);
    const ws = this.ws;
    this.ws = null;
    ws?.close(CloseCode.NORMAL, "client closed");
    this.options.onConnectionChange?.("closed");
  }

  private dropped(code: number, reason: string): void {
    this.ws = null;
    clearInterval(this.heartbeat);
    this.events.disconnected();
    if (this.connectionState === "closed") return;
    if (code === CloseCode.UNSUPPORTED_VERSION) {
      this.events.unsupportedVersion(reason); // retrying cannot help
      return;
    }
    this.connectionState = "reconnecting";
    this.options.onConnectionChange?.("reconnecting");
    const delay = backoffDelayMs(
      {
        ...RECONNECT,
        firstMs: this.options.reconnectInitialDelayMs ?? RECONNECT.firstMs,
        maxMs: this.options.reconnectMaxDelayMs ?? RECONNECT.maxMs,
      },
      this.attempt++,
    );
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
  }

  private startHeartbeat(): void {
    clearInterval(this.heartbeat);
    const idle = this.idleTimeoutMs;
    const every = Math.max(1000, Math.floor(idle / 3));
    this.heartbeat = setInterval(() => {
      if (!this.ws) return;
      // The server answers every ping: silence this long means the connection is dead.
      if (Date.now() - this.lastMessageAt > idle) {
        const ws = this.ws;
        this.dropped(CloseCode.IDLE_TIMEOUT, "server silent");
        ws.close();
        return;
      }
      this.send({ type: "ping" });
    }, every);
    (this.heartbeat as { unref?: () => void }).unref?.();
  }
}
