/**
 * The auth data functions (`auth:findMany` … `auth:rotateKeys`) and `users:setRole` are internal:
 * no client may call them over HTTP or the WebSocket, signed in or not — they would hand out
 * password hashes, session tokens and signing keys, or make anyone an administrator.
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type ExampleApp, startExampleApp } from "../helpers/example-app.ts";
import { eventually } from "../helpers/wait.ts";

let app: ExampleApp;
let token: string;
beforeAll(async () => {
  app = await startExampleApp();
  token = (await app.signUp("internal-probe@example.com")).token;
});
afterAll(async () => {
  await app.close();
});

const calls: [kind: "query" | "mutation" | "action", path: string, args: Record<string, unknown>][] = [
  ["query", "auth:findMany", { model: "account" }],
  ["query", "auth:findOne", { model: "session", where: [] }],
  ["mutation", "auth:updateOne", { model: "user", where: [], update: { role: "admin" } }],
  ["mutation", "auth:deleteMany", { model: "session", where: [] }],
  ["action", "auth:getLatestJwks", {}],
  ["action", "auth:rotateKeys", {}],
  ["mutation", "users:setRole", { email: "internal-probe@example.com", role: "admin" }],
];

describe("over HTTP", () => {
  for (const [kind, path, args] of calls) {
    it(`${kind} ${path} is refused`, async () => {
      for (const bearer of [null, token]) {
        const res = await app.call(kind, path, args, bearer);
        // Indistinguishable from a function that does not exist.
        expect(res.status).toBe(404);
        expect(res.body).toMatchObject({ status: "error", code: "FUNCTION_NOT_FOUND" });
        expect(res.text).not.toMatch(/privateKey|password|"token"/);
      }
    });
  }
});

describe("over the WebSocket", () => {
  it("every internal call gets an error result", async () => {
    const ws = new WebSocket(`${app.url.replace("http", "ws")}/api/sync`);
    const messages: any[] = [];
    ws.on("message", (d) => messages.push(JSON.parse(String(d))));
    await new Promise((resolve) => ws.once("open", resolve));
    ws.send(JSON.stringify({ type: "connect", v: 1, token }));
    for (const [i, [kind, path, args]] of calls.entries())
      ws.send(JSON.stringify({ type: kind, id: i + 1, path, args }));
    const results = await eventually(() => {
      const received = messages.filter((m) => m.type === "result");
      expect(received).toHaveLength(calls.length);
      return received;
    });
    ws.close();
    for (const r of results) expect(r.error?.code, JSON.stringify(r)).toBe("FUNCTION_NOT_FOUND");
    const me = await app.call("query", "users:me", {}, token);
    expect(me.body.value.role).toBe("user");
  });
});
