/**
 * An app made by `service-auth init` (issue 46, "Done when"): the folder `init` writes, nothing
 * edited, started with the documented command (`npm start`, which runs `service-auth start` in the
 * folder). It answers like the example under the hostile checks (brute force limited by the real
 * client address, a 5 MB name refused, a sign-in storm hashed off the event loop), refuses a
 * production start without secrets, serves /metrics with METRICS_TOKEN, runs WORKERS=2, drains on
 * SIGTERM and refuses a misspelled DATABASE_URL; a default it turns off is named.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUTH_RATE_LIMITS } from "../../src/auth/rate-limit/rules.ts";
import { freePort } from "../helpers/example-app.ts";
import { type ExampleServer, SERVICE_AUTH_BIN, spawnStart } from "../helpers/example-server.ts";
import { initApp } from "../helpers/init-app.ts";
import { PROCESS_TEST_TIMEOUT, runTsx } from "../helpers/process.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";
import { eventually } from "../helpers/wait.ts";

/** The app `init` made, shared by every test: each start has a database of its own. */
let dir: string;
beforeAll(async () => {
  dir = await initApp("my-app");
}, PROCESS_TEST_TIMEOUT);

/** `npm start` (`service-auth start`, the folder's app.mjs), or `service-auth start FILE`. */
const start = (env: Record<string, string | undefined>, args: string[] = ["start"]) =>
  spawnStart(args, { DATABASE_URL: tempDatabaseFile(), ...env }, { cwd: dir });

/** `service-auth start` run to its end (a refusal). */
async function refusedStart(env: Record<string, string | undefined>) {
  const nodeCwd = { cwd: dir, env: { PORT: String(await freePort()), LOG_LEVEL: "info", ...env } };
  return runTsx(SERVICE_AUTH_BIN, ["start"], nodeCwd);
}

const METRICS_TOKEN = "metrics-token-0123456789";
const PASSWORD = "correct horse battery";

const SIGN_IN_MAX = AUTH_RATE_LIMITS["/sign-in/*"].max;

function post(url: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${url}${path}`, {
    method: "POST",
    headers: { origin: url, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

/**
 * POSTs `body` declaring its whole length but sending only its first 64 KB, then waits for the
 * answer: a server that refuses by the declared length answers without reading the rest, and a
 * client still writing 5 MB to a socket the server has closed would fail with EPIPE instead.
 */
function postLarge(url: string, path: string, body: unknown): Promise<{ status: number; text: string }> {
  const data = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      {
        method: "POST",
        headers: { origin: url, "content-type": "application/json", "content-length": data.length },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => {
          resolve({ status: res.statusCode ?? 0, text });
          req.destroy();
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.write(data.subarray(0, 64 * 1024));
  });
}

/** 30 wrong passwords for one email, each from a forged X-Forwarded-For; the statuses seen. */
async function bruteForce(url: string): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < 30; i++) {
    const res = await post(
      url,
      "/api/auth/sign-in/email",
      { email: "ann@example.com", password: `wrong-${i}` },
      { "x-forwarded-for": `203.0.113.${i}` },
    );
    statuses.push(res.status);
    await res.body?.cancel();
  }
  return statuses;
}

/** The password-hash queue's length in a /metrics scrape (the native hasher's turn queue). */
function scryptQueue(scrape: string): number | undefined {
  const m = /^service_auth_queue_length\{queue="scrypt"\} (\d+)/m.exec(scrape);
  return m ? Number(m[1]) : undefined;
}

describe("an app made by `service-auth init`, started with `npm start`", {
  timeout: PROCESS_TEST_TIMEOUT,
}, () => {
  let server: ExampleServer;
  const databaseUrl = tempDatabaseFile();
  beforeAll(async () => {
    server = await start({ DATABASE_URL: databaseUrl, METRICS_TOKEN });
    const res = await post(server.url, "/api/auth/sign-up/email", {
      email: "ann@example.com",
      password: PASSWORD,
      name: "Ann",
    });
    expect(res.status).toBe(200);
  }, PROCESS_TEST_TIMEOUT);
  afterAll(() => server?.stop());

  it("generates the development secrets and says so; the mail goes to the development outbox", () => {
    expect(server.stderr()).toMatch(/generated SERVICE_AUTH_SECRET and JWKS for development/);
    expect(server.stderr()).toMatch(/no SMTP_URL: emails are logged/);
    expect(server.stderr()).not.toMatch(/defaults turned off/);
  });

  it("limits a brute force by the real client address: forged X-Forwarded-For changes nothing", async () => {
    const statuses = await bruteForce(server.url);
    expect(statuses.slice(0, SIGN_IN_MAX).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(SIGN_IN_MAX).every((s) => s === 429)).toBe(true);
  });

  it("refuses a 5 MB name (413) and a name over the field limit (400)", async () => {
    const huge = await postLarge(server.url, "/api/auth/sign-up/email", {
      email: "huge@example.com",
      password: PASSWORD,
      name: "n".repeat(5 * 1024 * 1024),
    });
    expect(huge.status).toBe(413);
    expect(JSON.parse(huge.text).code).toBe("PAYLOAD_TOO_LARGE");
    const long = await post(server.url, "/api/auth/sign-up/email", {
      email: "long@example.com",
      password: PASSWORD,
      name: "n".repeat(257),
    });
    expect(long.status).toBe(400);
    expect(await long.text()).toMatch(/name/);
  });

  it("serves /metrics with METRICS_TOKEN, and only with it", async () => {
    const without = await fetch(`${server.url}/metrics`);
    expect(without.status).not.toBe(200);
    await without.body?.cancel();
    const res = await fetch(`${server.url}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/^# HELP /m);
  });

  it("serves the app's own functions behind the auth", async () => {
    const res = await post(server.url, "/api/query", { path: "notes:list", args: {} });
    expect(res.status).toBe(401);
    expect((await res.json()).code).toBe("UNAUTHORIZED");
  });

  it("registers the product's functions: the CLI's audit command lists the sign-up", async () => {
    const res = await runTsx(SERVICE_AUTH_BIN, ["audit", "--type", "sign-up"], {
      cwd: dir,
      env: { DATABASE_URL: databaseUrl },
    });
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/ann@example\.com/);
  });
});

describe("a sign-in storm on an app made by `service-auth init`", { timeout: PROCESS_TEST_TIMEOUT }, () => {
  it("hashes the passwords in turn off the event loop: /healthz and /metrics answer while hashes queue", async () => {
    // Behind a trusted proxy, each sign-in from an address of its own: none is rate limited, so
    // every one verifies a password.
    const server = await start({ METRICS_TOKEN, TRUSTED_PROXIES: "127.0.0.1" });
    try {
      const email = "storm@example.com";
      const signUp = await post(server.url, "/api/auth/sign-up/email", {
        email,
        password: PASSWORD,
        name: "S",
      });
      expect(signUp.status).toBe(200);
      // More sign-ins at once than the hasher runs (the cores but one): the rest wait in its queue.
      const concurrency = 2 * availableParallelism() + 2;
      let stopped = false;
      let sent = 0;
      const statuses: number[] = [];
      const signInLoop = async () => {
        while (!stopped) {
          const i = ++sent;
          const res = await post(
            server.url,
            "/api/auth/sign-in/email",
            { email, password: PASSWORD },
            { "x-forwarded-for": `198.${18 + ((i >> 16) & 1)}.${(i >> 8) & 255}.${i & 255}` },
          );
          statuses.push(res.status);
          await res.body?.cancel();
        }
      };
      const storm = Promise.all(Array.from({ length: concurrency }, signInLoop));
      try {
        // The storm lasts until a scrape, answered by the event loop, finds hashes waiting.
        await eventually(async () => {
          const health = await fetch(`${server.url}/healthz`);
          expect(health.status).toBe(200);
          const scrape = await fetch(`${server.url}/metrics`, {
            headers: { authorization: `Bearer ${METRICS_TOKEN}` },
          });
          expect(scryptQueue(await scrape.text())).toBeGreaterThan(0);
        });
      } finally {
        stopped = true;
        await storm;
      }
      expect(statuses.length).toBeGreaterThanOrEqual(concurrency);
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
    } finally {
      await server.stop();
    }
  });
});

describe("the settings and rules of `npm start`, for an app made by `service-auth init`", {
  timeout: PROCESS_TEST_TIMEOUT,
}, () => {
  it("refuses a production start without secrets, naming each and the command", async () => {
    const res = await refusedStart({
      NODE_ENV: "production",
      DATABASE_URL: tempDatabaseFile(),
      SMTP_URL: "smtp://127.0.0.1:2525",
      MAIL_FROM: "app@example.com",
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^refusing to start: 2 settings to fix/m);
    expect(res.stderr).toMatch(/SERVICE_AUTH_SECRET: is not set/);
    expect(res.stderr).toMatch(/JWKS: is not set/);
    expect(res.stderr).toMatch(/env sync --auth/);
    expect(res.stderr).not.toMatch(/\n\s+at /);
  });

  it("refuses a misspelled DATABASE_URL with the others, password masked, in one report", async () => {
    const res = await refusedStart({
      DATABASE_URL: "postgress://postgres:hunter2@127.0.0.1:5433/svc",
      SHUTDOWN_DELAY_MS: "soon",
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^refusing to start: 2 settings to fix/m);
    expect(res.stderr).toMatch(
      /DATABASE_URL="postgress:\/\/postgres:\*+@127\.0\.0\.1:5433\/svc": unknown scheme/,
    );
    expect(res.stderr).toMatch(/SHUTDOWN_DELAY_MS="soon"/);
    expect(res.stderr).not.toMatch(/hunter2/);
  });

  it("runs WORKERS=2: two worker processes serve the port", async () => {
    const server = await start({ WORKERS: "2" });
    try {
      await eventually(() => expect(server.stderr()).toMatch(/"msg":"cluster started".*"workers":2/));
      // The primary says how many workers it runs; each worker announces itself too.
      await eventually(() => expect(server.stderr()).toMatch(/"msg":"listening on [^"]*","workers":2/));
      await eventually(() => expect(server.stderr().match(/"msg":"listening on [^"]*"}/g)).toHaveLength(2));
      const res = await fetch(`${server.url}/healthz`);
      expect(res.status).toBe(200);
      const page = await fetch(`${server.url}/`);
      expect(await page.text()).toMatch(/<title>Notes<\/title>/);
    } finally {
      await server.stop();
    }
  });

  it("drains on SIGTERM: /healthz answers 503 while it still serves, then it exits 0", async () => {
    // Long enough to be seen on a loaded machine; the exit comes after it.
    const server = await start({ SHUTDOWN_DELAY_MS: "10000" });
    const exited = new Promise<number | null>((r) => server.child.once("exit", (code) => r(code)));
    server.child.kill("SIGTERM");
    await eventually(async () => expect((await fetch(`${server.url}/healthz`)).status).toBe(503));
    const served = await post(server.url, "/api/query", { path: "notes:list", args: {} });
    expect(served.status).toBe(401);
    expect(await exited).toBe(0);
    expect(server.stderr()).toMatch(/shutting down: \/healthz answers 503, still serving/);
  });

  it("a default the app turns off is off and named in the start log: 30 wrong passwords, no 429", async () => {
    const app = readFileSync(join(dir, "app.mjs"), "utf8");
    const edited = app.replace("auth: { schema }", "auth: { schema, defaults: { rateLimit: false } }");
    expect(edited).not.toBe(app);
    writeFileSync(join(dir, "app-rate-limit-off.mjs"), edited);
    const server = await start({}, ["start", "app-rate-limit-off.mjs"]);
    try {
      expect(server.stderr()).toMatch(/defaults turned off by the app: rateLimit/);
      const statuses = await bruteForce(server.url);
      expect(statuses.every((s) => s === 401)).toBe(true);
    } finally {
      await server.stop();
    }
  });
});
