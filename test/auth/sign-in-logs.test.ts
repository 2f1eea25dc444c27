/**
 * Better Auth's own log lines go through the platform logger: a real `npm start` process at
 * LOG_LEVEL=info, where Better Auth logs failed sign-ins with the email (`User not found
 * { email }`, `Sign-up attempt for existing email: <email>`), writes them as JSON lines without any
 * email address.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ON_PINNED_LINE } from "../helpers/better-auth-line.ts";
import { PASSWORD } from "../helpers/example-app.ts";
import { type ExampleServer, spawnExampleServer } from "../helpers/example-server.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";
import { eventually } from "../helpers/wait.ts";

let server: ExampleServer;
beforeAll(async () => {
  server = await spawnExampleServer({
    DATABASE_URL: tempDatabaseFile(),
    TEST: undefined,
    VITEST: undefined,
    LOG_LEVEL: "info",
  } as any);
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

const post = (path: string, body: object) =>
  fetch(`${server.url}/api/auth${path}`, {
    method: "POST",
    headers: { origin: server.url, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

/** The JSON log lines written so far whose message is `msg`; waits until there is one. */
function logLines(msg: string): Promise<Record<string, unknown>[]> {
  return eventually(() => {
    const lines = server
      .stderr()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === msg);
    if (lines.length === 0) throw new Error(`no "${msg}" log line; stderr:\n${server.stderr()}`);
    return lines;
  });
}

it("logs a sign-in with an unknown email as JSON, without the email", async () => {
  const email = `nobody-${randomUUID()}@example.com`;
  const res = await post("/sign-in/email", { email, password: PASSWORD });
  expect(res.status).toBe(401);
  const [line] = await logLines("User not found");
  // Better Auth logs it as an error on 1.4.9, as a warning on the patched line.
  expect(line).toMatchObject({ level: ON_PINNED_LINE ? "error" : "warn", source: "better-auth" });
  expect(server.stderr()).not.toContain(email);
  expect(server.stderr()).not.toMatch(/[\w.+-]+@[\w-]+\.[\w.-]+/);
});

it("logs a wrong password without the email or the password", async () => {
  const email = `known-${randomUUID()}@example.com`;
  expect((await post("/sign-up/email", { email, password: PASSWORD, name: "Known" })).status).toBe(200);
  const wrong = `wrong-${randomUUID()}`;
  expect((await post("/sign-in/email", { email, password: wrong })).status).toBe(401);
  await logLines("Invalid password");
  expect(server.stderr()).not.toContain(email);
  expect(server.stderr()).not.toContain(wrong);
  expect(server.stderr()).not.toContain(PASSWORD);
});

it("logs a sign-up with a taken email without the email (Better Auth puts it in the message)", async () => {
  const email = `taken-${randomUUID()}@example.com`;
  expect((await post("/sign-up/email", { email, password: PASSWORD, name: "First" })).status).toBe(200);
  const again = await post("/sign-up/email", { email, password: PASSWORD, name: "Second" });
  // Better Auth 1.4.9 tells a sign-up that the email is taken (see docs/app-guide.md, "Limits", on enumeration).
  expect(again.status).toBe(422);
  expect(await again.json()).toMatchObject({ code: "USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL" });
  const [line] = await logLines("Sign-up attempt for existing email: [email]");
  expect(line).toMatchObject({ level: "info", source: "better-auth" });
  expect(server.stderr()).not.toContain(email);
});
