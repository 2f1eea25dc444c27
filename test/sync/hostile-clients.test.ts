/**
 * Hostile sockets against a server in its own process (as deployed: the client's and the server's
 * socket ends do not share an event loop). The memory attack of issue 11: anonymous sockets
 * subscribing to unknown functions with 900 KB arguments, over and over; the server must answer
 * every one without keeping it (its resident memory stays far below 1 GB; it used to pass 4 GB with
 * two sockets) while a signed-in client keeps getting answers. And oversize frames: closed with
 * 1009, the close frame delivered (cutting the socket right after queueing it showed as 1006).
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { browserAt } from "../helpers/browser.ts";
import { type ExampleServer, spawnExampleServer } from "../helpers/example-server.ts";
import { PROCESS_TEST_TIMEOUT } from "../helpers/process.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";
import { RawSocket } from "./fixtures/harness.ts";

const wsUrl = () => `${server.url.replace("http", "ws")}/api/sync`;

/** Attacking sockets, and the subscribes each sends (one at a time, the next once answered). */
const SOCKETS = 100;
const SUBSCRIBES_PER_SOCKET = 5;
const ARGS_BYTES = 900 * 1024;
const GiB = 1024 ** 3;

let server: ExampleServer;
beforeAll(async () => {
  server = await spawnExampleServer({ DATABASE_URL: tempDatabaseFile() });
}, PROCESS_TEST_TIMEOUT);
afterAll(() => server?.stop());

/** A field of the server process's /proc status in bytes (`VmHWM`: peak resident memory). */
function processMemory(field: "VmRSS" | "VmHWM"): number {
  const status = readFileSync(`/proc/${server.child.pid}/status`, "utf8");
  const kib = status.match(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m"));
  if (!kib) throw new Error(`no ${field} in /proc/${server.child.pid}/status`);
  return Number(kib[1]) * 1024;
}

/** Sends `count` subscribes to unknown functions, each after the previous one was answered. */
async function attack(url: string, socketNo: number): Promise<string[]> {
  const s = await RawSocket.connect(url);
  const junk = "x".repeat(ARGS_BYTES);
  const codes: string[] = [];
  for (let i = 0; i < SUBSCRIBES_PER_SOCKET; i++) {
    s.send({ type: "subscribe", id: i, path: `nope${socketNo}:f${i}`, args: { junk } });
    const answer = await s.next((m) => m.id === i);
    codes.push(answer.error?.code ?? answer.code);
  }
  s.close();
  return codes;
}

it(
  `keeps the server under 1 GB while ${SOCKETS} anonymous sockets subscribe to unknown functions with 900 KB arguments`,
  async () => {
    const browser = browserAt(server.url);
    const signUp = await browser.send("POST", "/api/auth/sign-up/email", {
      email: "legit@example.com",
      password: "correct horse battery",
      name: "Legit",
    });
    expect(signUp.status).toBe(200);
    const user = await RawSocket.connect(wsUrl(), browser.jar.get("service-auth.jwt") ?? null);

    let attacking = true;
    const attacks = Promise.all(Array.from({ length: SOCKETS }, (_, n) => attack(wsUrl(), n))).finally(() => {
      attacking = false;
    });
    // The signed-in client's queries are answered throughout.
    let answered = 0;
    for (let id = 0; attacking; id++) {
      user.send({ type: "query", id, path: "users:me", args: {} });
      const result = await user.next((m) => m.id === id);
      expect(result.value).toMatchObject({ email: "legit@example.com" });
      answered++;
    }
    const codes = (await attacks).flat();

    expect(codes).toHaveLength(SOCKETS * SUBSCRIBES_PER_SOCKET);
    expect(new Set(codes)).toEqual(new Set(["FUNCTION_NOT_FOUND"]));
    expect(answered).toBeGreaterThan(0);
    const peak = processMemory("VmHWM");
    console.log(
      `memory attack: ${SOCKETS} sockets × ${SUBSCRIBES_PER_SOCKET} subscribes of ${ARGS_BYTES} bytes; ` +
        `server peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB; ${answered} legit queries answered meanwhile`,
    );
    expect(peak).toBeLessThan(GiB);
    user.close();
  },
  PROCESS_TEST_TIMEOUT,
);

it("closes every socket sending a frame over the size limit with 1009", async () => {
  const big = JSON.stringify({ type: "query", id: 1, path: "users:me", args: { x: "y".repeat(8 << 20) } });
  const codes: number[] = [];
  for (let i = 0; i < 10; i++) {
    const s = await RawSocket.connect(wsUrl());
    s.ws.send(big);
    codes.push((await s.closed).code);
  }
  expect(codes).toEqual(Array(10).fill(1009));
});
