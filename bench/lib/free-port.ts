import { createServer } from "node:net";

/** A free TCP port on 127.0.0.1; `SITE_URL` (token issuer, trusted origin) must name it before listening. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
