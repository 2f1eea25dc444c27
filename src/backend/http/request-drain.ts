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
 */
import type { RequestListener, Server, ServerResponse } from "node:http";

/** Tracks the requests a listener is answering, so a close can wait for them. */
export class RequestDrain {
  private readonly active = new Set<ServerResponse>();
  private draining = false;
  private onIdle: (() => void) | null = null;

  /** Whether shutdown has begun ({@link announce} or {@link close}). */
  get closing(): boolean {
    return this.draining;
  }

  /** Requests handed to the app and not answered yet. */
  get inFlight(): number {
    return this.active.size;
  }

  /** Wraps `listener` so every request it gets is tracked until its response closes. */
  listener(listener: RequestListener): RequestListener {
    const active = this.active;
    // One shared function (it reads the response from `this`): tracking allocates nothing per request.
    const drain = this;
    function responseClosed(this: ServerResponse) {
      active.delete(this);
      if (drain.draining && active.size === 0) drain.onIdle?.();
    }
    return (req, res) => {
      active.add(res);
      res.on("close", responseClosed);
      // Accepted on an open connection while closing: answered, then that connection ends.
      if (this.draining) res.shouldKeepAlive = false;
      listener(req, res);
    };
  }

  /**
   * Shutdown is coming: from now on every answer carries `Connection: close` (those not yet sent
   * included) and {@link closing} is true, while the server keeps accepting.
   */
  announce(): void {
    this.draining = true;
    for (const res of this.active) if (!res.headersSent) res.shouldKeepAlive = false;
  }

  /**
   * Stops `server` accepting, waits until every tracked request is answered or `deadline`
   * (epoch ms) passes, then closes every remaining connection (upgraded sockets excepted: their
   * owner closes them). Resolves with the number of requests cut at the deadline.
   */
  async close(server: Server, deadline: number): Promise<number> {
    this.announce();
    // Also closes idle keep-alive sockets (Node ≥ 19).
    server.close();
    if (this.active.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((done) => {
        this.onIdle = done;
        timer = setTimeout(done, Math.max(0, deadline - Date.now()));
      });
      clearTimeout(timer);
      this.onIdle = null;
    }
    const cut = this.active.size;
    server.closeAllConnections();
    return cut;
  }
}
