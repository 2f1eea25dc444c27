/**
 * A start the operator must fix is refused once, with everything to fix in one report and no stack
 * trace: every setting with a problem (value masked, how to fix it), an unknown or misspelled
 * `DATABASE_URL` scheme (never taken for a file name), a multi-host PostgreSQL URL without a
 * primary, a URL asking for a standby, a busy port.
 * Each runs `npm start` (`service-auth start examples/app`) as a real process.
 */
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { freePort } from "../helpers/example-app.ts";
import { SERVICE_AUTH_BIN, START_EXAMPLE } from "../helpers/example-server.ts";
import { PROCESS_TEST_TIMEOUT, ROOT, runTsx } from "../helpers/process.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";

/** A line of a stack trace. */
const STACK = /\n\s+at /;

const start = async (env: Record<string, string>) =>
  runTsx(SERVICE_AUTH_BIN, START_EXAMPLE, {
    env: { PORT: String(await freePort()), LOG_LEVEL: "info", ...env },
  });

describe("start refusals", { timeout: PROCESS_TEST_TIMEOUT }, () => {
  it("NODE_ENV=production names every missing setting in one refusal: secrets, SMTP_URL and MAIL_FROM", async () => {
    const res = await start({ NODE_ENV: "production", DATABASE_URL: tempDatabaseFile() });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/refusing to start: 4 settings to fix/);
    for (const name of ["SERVICE_AUTH_SECRET", "JWKS", "SMTP_URL", "MAIL_FROM"])
      expect(res.stderr).toMatch(new RegExp(`^  ${name}: .*\\n    fix: `, "m"));
    expect(res.stderr).toContain("npm run cli -- env sync --auth");
    expect(res.stderr).not.toMatch(STACK);
    expect(res.stderr).not.toMatch(/listening on/);
  });

  it("a bad setting in the environment is named beside the missing ones, its secret masked", async () => {
    const res = await start({
      NODE_ENV: "production",
      DATABASE_URL: tempDatabaseFile(),
      PORT: "30x0",
      SHUTDOWN_TIMEOUT_MS: "soon",
      SMTP_URL: "https://mailer:hunter2@mail.example.com",
      MAIL_FROM: "App <no-reply@example.com>",
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/refusing to start: 5 settings to fix/);
    expect(res.stderr).toMatch(/^ {2}PORT="30x0": not a port number/m);
    expect(res.stderr).toMatch(/^ {2}SHUTDOWN_TIMEOUT_MS="soon": /m);
    expect(res.stderr).toMatch(
      /^ {2}SMTP_URL="https:\/\/mailer:\*\*\*\*@mail\.example\.com": must start with smtp:\/\//m,
    );
    expect(res.stderr).not.toContain("hunter2");
    expect(res.stderr).not.toMatch(STACK);
  });

  it("bad metrics settings are named with the others, the token masked", async () => {
    const res = await start({
      DATABASE_URL: tempDatabaseFile(),
      METRICS_PORT: "metrics",
      METRICS_TOKEN: "tiny-token",
      SHUTDOWN_DELAY_MS: "later",
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/refusing to start: 3 settings to fix/);
    expect(res.stderr).toMatch(/^ {2}METRICS_PORT="metrics": not a port number/m);
    expect(res.stderr).toMatch(
      /^ {2}METRICS_TOKEN="\*\*\*\* \(10 characters\)": shorter than 16 characters/m,
    );
    expect(res.stderr).not.toContain("tiny-token");
    expect(res.stderr).not.toMatch(STACK);
  });

  it("an unknown DATABASE_URL scheme is refused, password masked, and no file or folder is made of it", async () => {
    for (const url of ["postgress://postgres:s3cret-pw@127.0.0.1:5433/svc", "mysql://x@y/z"]) {
      const res = await start({ DATABASE_URL: url });
      expect(res.code, url).toBe(1);
      expect(res.stderr).toMatch(/DATABASE_URL=".*": unknown scheme "(postgress|mysql):"/);
      expect(res.stderr).toMatch(/fix: use postgres:\/\//);
      expect(res.stderr).not.toContain("s3cret-pw");
      if (url.startsWith("postgress"))
        expect(res.stderr).toContain('DATABASE_URL="postgress://postgres:****@127.0.0.1:5433/svc"');
      expect(res.stderr).not.toMatch(STACK);
      expect(res.stderr).not.toMatch(/generated|listening on/);
      expect(existsSync(join(ROOT, url.slice(0, url.indexOf(":") + 1)))).toBe(false);
    }
  });

  it("a multi-host PostgreSQL URL with no primary among its hosts names each host's answer, without a TypeError or a stack", async () => {
    const [a, b] = [await freePort(), await freePort()];
    const res = await start({
      DATABASE_URL: `postgres://app:pw-123@127.0.0.1:${a},127.0.0.1:${b}/db?target_session_attrs=read-write`,
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(
      `cannot connect to PostgreSQL at 127.0.0.1:${a}, 127.0.0.1:${b}, database "db"`,
    );
    expect(res.stderr).toContain(
      `no writable PostgreSQL server among 127.0.0.1:${a} (connection refused), 127.0.0.1:${b} (connection refused)`,
    );
    expect(res.stderr).toMatch(/fix: wait for the failover manager to promote a standby/);
    expect(res.stderr).not.toMatch(/TypeError|Invalid URL/);
    expect(res.stderr).not.toContain("pw-123");
    expect(res.stderr).not.toMatch(STACK);
  });

  it("a DATABASE_URL asking for a standby is refused as a setting, pointing to DATABASE_READ_URLS", async () => {
    const res = await start({
      DATABASE_URL: "postgres://app:pw-123@127.0.0.1:6001,127.0.0.1:6002/db?target_session_attrs=standby",
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/DATABASE_URL=".*": asks for a standby \(target_session_attrs=standby\)/);
    expect(res.stderr).toMatch(/DATABASE_READ_URLS/);
    expect(res.stderr).not.toContain("pw-123");
    expect(res.stderr).not.toMatch(STACK);
  });

  it("a port in use names the port and the PORT setting", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const res = await start({ DATABASE_URL: tempDatabaseFile(), PORT: String(port) });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(`port ${port} is already in use`);
      expect(res.stderr).toMatch(/PORT setting/);
      expect(res.stderr).not.toMatch(/EADDRINUSE|listening on/);
      expect(res.stderr).not.toMatch(STACK);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});
