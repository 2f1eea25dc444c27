/**
 * A service that fails to start must release what it already opened: the database connections
 * and, when the failure comes after listening, the port.
 */
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import type { BackendRuntime } from "../../src/backend/runtime.ts";
import { freePort } from "../helpers/example-app.ts";
import { startTestService } from "../helpers/service.ts";
import * as messages from "../sync/fixtures/messages.ts";
import schema from "../sync/fixtures/schema.ts";

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

describe("startService failure", () => {
  it("closes the HTTP server and the storage when attaching fails", async () => {
    const port = await freePort();
    let backend: BackendRuntime | undefined;
    await expect(
      startTestService({
        schema,
        modules: { messages },
        port,
        prepare: async (b) => {
          backend = b;
        },
        attach: () => {
          throw new Error("attach failed");
        },
      }),
    ).rejects.toThrow("attach failed");
    expect(await canListen(port)).toBe(true);
    await expect(backend?.engine.ping()).rejects.toThrow("The database connection is not open");
  });

  it("closes the storage when the port is taken", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as { port: number }).port;
    let backend: BackendRuntime | undefined;
    try {
      await expect(
        startTestService({
          schema,
          modules: { messages },
          port,
          prepare: async (b) => {
            backend = b;
          },
        }),
      ).rejects.toMatchObject({ code: "EADDRINUSE" });
      await expect(backend?.engine.ping()).rejects.toThrow("The database connection is not open");
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});
