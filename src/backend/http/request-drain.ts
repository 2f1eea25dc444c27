/**
 * Graceful close of a Node HTTP server, in two phases. Announced ({@link RequestDrain.announce}):
 * still accepting and answering, but every answer closes its connection and `/healthz` says 503,
 * so a load balancer stops routing here while nothing it already routed fails. Closed
 * ({@link RequestDrain.close}): stop accepting connections, let every request already handed to
 * the app finish (its connection closes after the response), then cut what is left: connections
 * that never got a request through (idle keep-alive sockets, half-sent headers) and, once the
 * deadline passes, requests still running. After an announcement long enough for the balancer's
 * health checks, no request races into the idle sockets that the close ends.
 *
 * Node's own `server.close()` closes idle sockets but keeps answering `Connection: keep-alive` on
 * busy ones, which then linger for the whole keep-alive timeout; `closeAllConnections()` cuts
 * requests mid-flight. Neither is a drain, hence this module.
 *
 * Which sockets are idle is decided here, not by Node's `closeIdleConnections()` (which
 * `server.close()` calls): since nodejs/node#63470 (Node 26; Node 22 and 24 differ) Node counts a
 * connection as idle from its accept until the parser has read the first byte of its first
 * request, so a close cut a connection whose request was already on the wire but not yet read
 * (ECONNRESET at the client, and a load balancer's health check lost). Here an idle socket is one
 * that has had a request, has every response finished and has sent nothing since: the same on
 * every Node line.
 */
import { type IncomingMessage, type RequestListener, type Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/** Where a {@link RequestDrain.Response} keeps the keep-alive Node and the app asked for. */
const KEEP_ALIVE = Symbol("keepAlive");

const OPEN = Symbol("openResponses");
const READ_WHEN_IDLE = Symbol("readWhenIdle");

/** What the drain knows of a connection that has had a request: kept on its socket. */
interface ServedSocket extends Socket {
  /** Its tracked responses not closed yet. */
  [OPEN]: number;
  /** `bytesRead` when its last response closed: more since means a request is arriving. */
  [READ_WHEN_IDLE]: number;
}

/**
 * Tracks the requests a server is answering, so a close can wait for them. Per request it costs a
 * counter and a flag: the server is created with {@link RequestDrain.Response}, whose keep-alive
 * reads the drain's state and whose `close` event ends the count. A `Set` of the responses and a
 * `close` listener on each, as before, cost 4.2 µs of server CPU per HTTP point read, 6 %
 * (decision 43). To find the idle keep-alive connections it also counts, on each socket, the
 * responses not closed yet; the `Set` entry and `close` listener for that are per connection.
 */
export class RequestDrain {
  private active = 0;
  private draining = false;
  private onIdle: (() => void) | null = null;
  /** Open connections that have had a tracked request (an entry per connection, not request). */
  private readonly served = new Set<ServedSocket>();

  /**
   * The `ServerResponse` class to create the server with (`createServer({ ServerResponse })`):
   * once the drain is announced, every answer whose headers are not written yet says
   * `Connection: close` (Node reads `shouldKeepAlive` when it writes them), and a tracked response
   * leaves the count when it closes (answered, or its connection lost).
   */
  readonly Response: typeof ServerResponse;

  constructor() {
    const drain = this;
    class DrainedResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
      /** Counted in `active` until its `close` (Node may emit `close` more than once). */
      tracked = false;
      /** Its connection (Node detaches `socket` before `close`). */
      connection: ServedSocket | null = null;

      override emit(event: string | symbol, ...args: any[]): boolean {
        if (event === "close" && this.tracked) {
          this.tracked = false;
          drain.responseClosed(this.connection);
          this.connection = null;
        }
        return super.emit(event, ...args);
      }
    }
    // An accessor where Node has a plain property. Node assigns `shouldKeepAlive` inside the
    // `ServerResponse` constructor, before any field of a subclass exists, so what it (or the app)
    // asked for is kept under a symbol; the drain only ever turns keep-alive off.
    Object.defineProperty(DrainedResponse.prototype, "shouldKeepAlive", {
      get(this: { [KEEP_ALIVE]?: boolean }): boolean {
        return this[KEEP_ALIVE] !== false && !drain.draining;
      },
      set(this: { [KEEP_ALIVE]?: boolean }, value: boolean) {
        this[KEEP_ALIVE] = value;
      },
    });
    this.Response = DrainedResponse;
  }

  /** Whether shutdown has begun ({@link announce} or {@link close}). */
  get closing(): boolean {
    return this.draining;
  }

  /** Requests handed to the app and not answered yet. */
  get inFlight(): number {
    return this.active;
  }

  /** Wraps `listener` so every request it gets is counted until its response closes. */
  listener(listener: RequestListener): RequestListener {
    return (req, res) => {
      // Created by a server without `Response`: untracked, as nothing would end its count.
      if (res instanceof this.Response) {
        const tracked = res as ServerResponse & { tracked: boolean; connection: ServedSocket | null };
        tracked.tracked = true;
        this.active++;
        const socket = req.socket as ServedSocket;
        if (socket[OPEN] === undefined) this.firstRequestOn(socket);
        socket[OPEN]++;
        tracked.connection = socket;
      }
      listener(req, res);
    };
  }

  /** A connection's first tracked request: it is a keep-alive candidate from now on. */
  private firstRequestOn(socket: ServedSocket): void {
    socket[OPEN] = 0;
    socket[READ_WHEN_IDLE] = 0;
    this.served.add(socket);
    socket.once("close", () => this.served.delete(socket));
  }

  private responseClosed(socket: ServedSocket | null): void {
    if (socket !== null && --socket[OPEN] === 0) socket[READ_WHEN_IDLE] = socket.bytesRead;
    this.active--;
    if (this.draining && this.active === 0) this.onIdle?.();
  }

  /**
   * Closes the keep-alive connections waiting between requests: those that have had a request,
   * whose every response is finished and whose client has sent nothing since. A connection that
   * has not had a request yet (its first one may be on the wire, unread) and one whose next
   * request has begun to arrive stay open: the first is answered, the rest wait for the end of
   * {@link close}. (A pipelined request whose head was read before the previous answer closed is
   * not seen; clients do not pipeline.)
   */
  private closeIdle(): void {
    for (const socket of this.served) {
      if (socket[OPEN] === 0 && socket.bytesRead === socket[READ_WHEN_IDLE]) socket.destroy();
    }
  }

  /**
   * Shutdown is coming: from now on every answer carries `Connection: close` (those not yet sent
   * included) and {@link closing} is true, while the server keeps accepting.
   */
  announce(): void {
    this.draining = true;
  }

  /**
   * Stops `server` accepting, waits until every tracked request is answered or `deadline`
   * (epoch ms) passes, then closes every remaining connection (upgraded sockets excepted: their
   * owner closes them). Resolves with the number of requests cut at the deadline.
   */
  async close(server: Server, deadline: number): Promise<number> {
    this.announce();
    // Stops accepting. Node's `close()` would also call `closeIdleConnections()`, whose idea of
    // idle differs between Node lines (module header): this drain's own is used instead.
    const own = Object.getOwnPropertyDescriptor(server, "closeIdleConnections");
    server.closeIdleConnections = () => {};
    try {
      server.close();
    } finally {
      if (own) Object.defineProperty(server, "closeIdleConnections", own);
      else delete (server as { closeIdleConnections?: unknown }).closeIdleConnections;
    }
    this.closeIdle();
    if (this.active > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((done) => {
        this.onIdle = done;
        timer = setTimeout(done, Math.max(0, deadline - Date.now()));
      });
      clearTimeout(timer);
      this.onIdle = null;
    }
    const cut = this.active;
    server.closeAllConnections();
    return cut;
  }
}
