/** Reactive subscriptions over real sockets: initial results, pushes, precision, sharing, ordering. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RawSocket, type SyncApp, startSyncApp } from "./fixtures/harness.ts";
import { executions } from "./fixtures/messages.ts";

let app: SyncApp;
beforeAll(async () => {
  app = await startSyncApp();
});
afterAll(() => app?.close());

const post = (channel: string, body: string) =>
  app.service.backend.runMutation("messages:post", { channel, body });

describe("subscriptions", () => {
  it("sends the initial result, then each changed result", async () => {
    const s = await RawSocket.connect(app.wsUrl);
    s.send({ type: "subscribe", id: 1, path: "messages:byChannel", args: { channel: "a1" } });
    expect(await s.next((m) => m.type === "update")).toEqual({ type: "update", id: 1, value: [] });
    await post("a1", "hello");
    expect(await s.next((m) => m.type === "update")).toEqual({ type: "update", id: 1, value: ["hello"] });
    await post("a1", "again");
    expect((await s.next((m) => m.type === "update")).value).toEqual(["hello", "again"]);
    s.close();
  });

  it("does not push when the result did not change", async () => {
    const s = await RawSocket.connect(app.wsUrl);
    s.send({ type: "subscribe", id: "c", path: "messages:countIn", args: { channel: "b1" } });
    expect((await s.next((m) => m.type === "update")).value).toBe(0);
    const id = (await post("b1", "x")).value as string;
    expect((await s.next((m) => m.type === "update")).value).toBe(1);
    const before = executions.get("countIn:b1") ?? 0;
    // The edit touches the read range (re-run) but the count stays 1 (no push).
    await app.service.backend.runMutation("messages:edit", { id, body: "y" });
    await post("b1", "z");
    const next = await s.next((m) => m.type === "update");
    expect(next.value).toBe(2); // the first update after 1 is 2: the edit pushed nothing
    expect(executions.get("countIn:b1")).toBe(before + 2);
    s.close();
  });

  it("does not re-run a query for writes outside what it read", async () => {
    const s = await RawSocket.connect(app.wsUrl);
    s.send({ type: "subscribe", id: 1, path: "messages:byChannel", args: { channel: "quiet" } });
    await s.next((m) => m.type === "update");
    const before = executions.get("byChannel:quiet");
    for (let i = 0; i < 5; i++) await post("noisy", `n${i}`);
    await app.service.backend.write((db) => db.insert("users", { name: "someone", banned: false }));
    // A write that does touch it proves the subscription is live and that the others were skipped.
    await post("quiet", "now");
    expect((await s.next((m) => m.type === "update")).value).toEqual(["now"]);
    expect(executions.get("byChannel:quiet")).toBe((before ?? 0) + 1);
    s.close();
  });

  it("shares one execution between identical subscriptions of several clients", async () => {
    const sockets = await Promise.all([1, 2, 3].map(() => RawSocket.connect(app.wsUrl)));
    for (const [i, s] of sockets.entries()) {
      // Different key order, same args.
      s.send({ type: "subscribe", id: i, path: "messages:byChannel", args: { channel: "shared" } });
      await s.next((m) => m.type === "update");
    }
    expect(executions.get("byChannel:shared")).toBe(1);
    await post("shared", "one");
    for (const s of sockets) expect((await s.next((m) => m.type === "update")).value).toEqual(["one"]);
    expect(executions.get("byChannel:shared")).toBe(2);
    for (const s of sockets) s.close();
  });

  it("pushes a query error and recovers when the query does", async () => {
    const s = await RawSocket.connect(app.wsUrl);
    s.send({ type: "subscribe", id: 9, path: "messages:fail", args: {} });
    const m = await s.next((x) => x.type === "update");
    expect(m).toEqual({ type: "update", id: 9, error: { code: "FORBIDDEN", message: "never" } });
    s.send({ type: "subscribe", id: 10, path: "messages:nope", args: {} });
    expect((await s.next((x) => x.type === "update")).error.code).toBe("FUNCTION_NOT_FOUND");
    // The same "did you mean" as over HTTP and in the CLI.
    s.send({ type: "subscribe", id: 12, path: "messages:byChanel", args: {} });
    const typo = (await s.next((x) => x.type === "update" && x.id === 12)).error;
    expect(typo.code).toBe("FUNCTION_NOT_FOUND");
    expect(typo.message).toMatch(/^No function "messages:byChanel"; did you mean messages:byChannel[,?]/);
    s.send({ type: "subscribe", id: 11, path: "messages:byChannel", args: { channel: 5 } });
    expect((await s.next((x) => x.type === "update")).error.code).toBe("INVALID_ARGUMENTS");
    s.close();
  });

  it("stops pushing after unsubscribe", async () => {
    const s = await RawSocket.connect(app.wsUrl);
    s.send({ type: "subscribe", id: 1, path: "messages:byChannel", args: { channel: "u1" } });
    s.send({ type: "subscribe", id: 2, path: "messages:byChannel", args: { channel: "u2" } });
    await s.next((m) => m.type === "update" && m.id === 1);
    await s.next((m) => m.type === "update" && m.id === 2);
    s.send({ type: "unsubscribe", id: 1 });
    s.send({ type: "ping" }); // messages are handled in order: the pong means the unsubscribe is done
    await s.next((m) => m.type === "pong");
    await post("u1", "gone");
    // The barrier: a later write that subscription 2 must see. Messages on a connection are
    // ordered, so an update of subscription 1 caused by "gone" would have arrived before it.
    await post("u2", "here");
    const m = await s.next((x) => x.type === "update");
    expect(m).toEqual({ type: "update", id: 2, value: ["here"] });
    expect(s.pending().filter((x) => x.type === "update")).toEqual([]);
    s.close();
  });
});

describe("calls", () => {
  it("shows the caller its own write before the mutation result", async () => {
    const s = await RawSocket.connect(app.wsUrl);
    s.send({ type: "subscribe", id: "list", path: "messages:byChannel", args: { channel: "own" } });
    await s.next((m) => m.type === "update");
    const order: string[] = [];
    const seen = Promise.all([
      s.next((m) => m.type === "update").then((m) => order.push(`update:${m.value.join()}`)),
      s.next((m) => m.type === "result").then((m) => order.push(`result:${typeof m.value}`)),
    ]);
    s.send({ type: "mutation", id: 7, path: "messages:post", args: { channel: "own", body: "mine" } });
    await seen;
    expect(order).toEqual(["update:mine", "result:string"]);
    s.close();
  });

  it("runs queries, mutations and actions with typed errors", async () => {
    const s = await RawSocket.connect(app.wsUrl);
    s.send({ type: "action", id: 1, path: "messages:echo", args: { text: "hi" } });
    expect(await s.next((m) => m.id === 1)).toEqual({ type: "result", id: 1, value: "HI" });
    s.send({ type: "query", id: 2, path: "messages:whoami", args: {} });
    expect(await s.next((m) => m.id === 2)).toEqual({ type: "result", id: 2, value: null });
    s.send({ type: "mutation", id: 3, path: "messages:send", args: { channel: "x", body: "y" } });
    expect(await s.next((m) => m.id === 3)).toEqual({
      type: "result",
      id: 3,
      error: { code: "UNAUTHORIZED", message: "Sign in to post" },
    });
    s.send({ type: "mutation", id: 4, path: "messages:byChannel", args: { channel: "x" } });
    expect((await s.next((m) => m.id === 4)).error.code).toBe("FUNCTION_NOT_FOUND");
    s.close();
  });
});
