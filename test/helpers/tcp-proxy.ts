/**
 * A TCP proxy a test controls, to put a connection into states real networks produce: `stall()`
 * stops forwarding in both directions while every socket stays open (a half-open connection, a
 * hung middlebox); new connections are accepted but not forwarded either. `resume()` forwards
 * again, for new connections only: stalled ones stay dead, as after a real outage.
 */
import { connect, createServer, type Server, type Socket } from "node:net";

export interface TcpProxy {
  port: number;
  stall(): void;
  resume(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = "127.0.0.1"): Promise<TcpProxy> {
  let stalled = false;
  const sockets = new Set<Socket>();
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => {});
    if (stalled) return; // accepted, never answered
    const upstream = connect(targetPort, targetHost);
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
    upstream.on("error", () => client.destroy());
    const pair = { client, upstream };
    pairs.add(pair);
    client.on("data", (chunk) => {
      if (pairs.has(pair)) upstream.write(chunk);
    });
    upstream.on("data", (chunk) => {
      if (pairs.has(pair)) client.write(chunk);
    });
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address !== "object") throw new Error("proxy has no port");
  return {
    port: address.port,
    stall() {
      stalled = true;
      // Data of existing connections is swallowed from now on; the sockets stay open.
      pairs.clear();
    },
    resume() {
      stalled = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
