/**
 * Starting the example server (DESIGN "Contract for running it", requirements §5): production refuses to
 * start without SERVICE_AUTH_SECRET and JWKS and prints the command that makes them; the first
 * development start makes them itself and says so; `env sync --auth` makes them once. Production
 * also needs SMTP_URL (the development outbox only logs mail).
 */
import { describe, expect, it } from "vitest";
import { app } from "../../examples/app/app.ts";
import { freePort, PASSWORD } from "../helpers/example-app.ts";
import { SERVICE_AUTH_BIN, START_EXAMPLE, spawnExampleServer } from "../helpers/example-server.ts";
import { getJson, postJson } from "../helpers/http.ts";
import { PROCESS_TEST_TIMEOUT, runCli, runTsx } from "../helpers/process.ts";
import { startTestBackend } from "../helpers/service.ts";
import { startSmtpServer } from "../helpers/smtp.ts";
import { tempDatabaseFile, tempDir } from "../helpers/temp.ts";

const COMMAND = "npm run cli -- env sync --auth";
const cli = (databaseUrl: string, args: string[]) =>
  runCli(args, { env: { DATABASE_URL: databaseUrl, NODE_ENV: "development" } });
/** A variable as stored in the database (read in-process: the CLI's `env get` shows the same). */
const stored = async (databaseUrl: string, name: string) => {
  const backend = await startTestBackend({ schema: app.schema, modules: {}, filename: databaseUrl });
  try {
    return backend.env.stored().find(([n]) => n === name)?.[1];
  } finally {
    await backend.close();
  }
};

describe("startup", { timeout: PROCESS_TEST_TIMEOUT }, () => {
  it("NODE_ENV=production with an empty database exits 1 and prints the command to run", async () => {
    const databaseUrl = tempDatabaseFile();
    const port = await freePort();
    const res = await runTsx(SERVICE_AUTH_BIN, START_EXAMPLE, {
      env: {
        NODE_ENV: "production",
        DATABASE_URL: databaseUrl,
        PORT: String(port),
        SITE_URL: `http://127.0.0.1:${port}`,
        LOG_LEVEL: "info",
      },
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(COMMAND);
    expect(res.stderr).toMatch(/SERVICE_AUTH_SECRET/);
    expect(res.stderr).not.toMatch(/listening on/);
    // Nothing was generated behind the operator's back.
    expect(await stored(databaseUrl, "SERVICE_AUTH_SECRET")).toBeUndefined();
    expect(await stored(databaseUrl, "JWKS")).toBeUndefined();
  });

  it("the first development start generates SERVICE_AUTH_SECRET and JWKS and says so; the next one does not", async () => {
    const databaseUrl = tempDatabaseFile();
    const first = await spawnExampleServer({ DATABASE_URL: databaseUrl });
    await first.stop();
    expect(first.stderr()).toMatch(/generated SERVICE_AUTH_SECRET and JWKS/);
    const secret = await stored(databaseUrl, "SERVICE_AUTH_SECRET");
    const jwks = await stored(databaseUrl, "JWKS");
    expect(secret!.length).toBeGreaterThanOrEqual(32);
    expect(JSON.parse(jwks!)).toHaveLength(1);
    // The announcement names the variables, never their values.
    expect(first.stderr()).not.toContain(secret);

    const second = await spawnExampleServer({ DATABASE_URL: databaseUrl });
    await second.stop();
    expect(second.stderr()).not.toMatch(/generated/);
    expect(await stored(databaseUrl, "SERVICE_AUTH_SECRET")).toBe(secret);
    expect(await stored(databaseUrl, "JWKS")).toBe(jwks);
  });

  it("env sync --auth generates both when absent, leaves them alone when present; production then starts", async () => {
    const databaseUrl = tempDatabaseFile();
    const noEnvFile = `${tempDir()}/absent.env`;
    const first = await cli(databaseUrl, ["env", "sync", noEnvFile, "--auth"]);
    expect(first.code).toBe(0);
    expect(first.stderr).toMatch(/generated SERVICE_AUTH_SECRET, JWKS/);
    const secret = await stored(databaseUrl, "SERVICE_AUTH_SECRET");
    const jwks = await stored(databaseUrl, "JWKS");
    expect(secret!.length).toBeGreaterThanOrEqual(32);
    expect(JSON.parse(jwks!)).toHaveLength(1);

    const again = await cli(databaseUrl, ["env", "sync", noEnvFile, "--auth"]);
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(/already set/);
    expect(await stored(databaseUrl, "SERVICE_AUTH_SECRET")).toBe(secret);
    expect(await stored(databaseUrl, "JWKS")).toBe(jwks);

    const withoutMail = await runTsx(SERVICE_AUTH_BIN, START_EXAMPLE, {
      env: {
        NODE_ENV: "production",
        DATABASE_URL: databaseUrl,
        PORT: String(await freePort()),
        LOG_LEVEL: "info",
      },
    });
    expect(withoutMail.code).toBe(1);
    expect(withoutMail.stderr).toMatch(/refusing to start: 2 settings to fix\n {2}SMTP_URL: is not set/);
    expect(withoutMail.stderr).toMatch(/^ {2}MAIL_FROM: must be set/m);
    expect(withoutMail.stderr).not.toMatch(/listening on|\n\s+at /);

    const smtp = await startSmtpServer();
    const server = await spawnExampleServer({
      DATABASE_URL: databaseUrl,
      NODE_ENV: "production",
      SMTP_URL: smtp.url,
      MAIL_FROM: "Example <no-reply@example.com>",
    });
    try {
      expect(server.stderr()).not.toMatch(/generated/);
      expect((await getJson(`${server.url}/healthz`)).status).toBe(200);
      // Signing works with the synced keys, and the token passes both steps.
      const signUp = await fetch(`${server.url}/api/auth/sign-up/email`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: server.url },
        body: JSON.stringify({ email: "prod@example.com", password: PASSWORD, name: "Prod" }),
      });
      expect(signUp.status).toBe(200);
      const line = signUp.headers.getSetCookie().find((c) => /^(__Secure-)?service-auth\.jwt=/.test(c))!;
      const token = line.slice(line.indexOf("=") + 1, line.indexOf(";"));
      const me = await postJson(
        `${server.url}/api/query`,
        { path: "users:me", args: {} },
        { authorization: `Bearer ${token}` },
      );
      expect(me.body.value.email).toBe("prod@example.com");
      // The sign-up's verification email went out over SMTP.
      expect((await smtp.next("prod@example.com")).subject).toMatch(/Verify your email address/);
    } finally {
      await server.stop();
      await smtp.close();
    }
  });
});
