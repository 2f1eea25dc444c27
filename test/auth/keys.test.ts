/**
 * Signing keys (requirements §1.7, §4.2, §5.3, §5.8): static `JWKS` signs without reading the `jwks` table
 * and verifies without network; dynamic keys verify through the key-set endpoint over HTTP;
 * `auth:getLatestJwks` and `auth:rotateKeys` from the CLI, and a running server that picks up a
 * rotated `JWKS` and refuses every older token.
 */
import { decodeProtectedHeader } from "jose";
import { describe, expect, it } from "vitest";
import { app as exampleApp } from "../../examples/app/app.ts";
import { type ExampleApp, PASSWORD, startExampleApp } from "../helpers/example-app.ts";
import { spawnExampleServer } from "../helpers/example-server.ts";
import { getJson, postJson } from "../helpers/http.ts";
import { storedSigningKey } from "../helpers/jwt-forge.ts";
import { PROCESS_TEST_TIMEOUT, runCli } from "../helpers/process.ts";
import { startTestBackend } from "../helpers/service.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";
import { eventually } from "../helpers/wait.ts";

/**
 * Step 1 + 2 for `token` in a backend that has no HTTP server and whose SITE_URL nobody serves
 * any more: it succeeds only if verification needs no network.
 */
async function authenticateOffline(databaseFile: string, siteUrl: string, token: string) {
  const backend = await startTestBackend({
    schema: exampleApp.schema,
    modules: exampleApp.modules,
    auth: exampleApp.auth,
    filename: databaseFile,
  });
  try {
    backend.env.setDefault("SITE_URL", siteUrl);
    backend.configureAuth();
    return await backend.authenticate(token);
  } finally {
    await backend.close();
  }
}

const cli = (databaseUrl: string, args: string[], stdin?: string) =>
  runCli(args, { env: { DATABASE_URL: databaseUrl, NODE_ENV: "development" }, stdin });

describe("static JWKS", () => {
  it("signs without the jwks table and verifies without network", async () => {
    let app: ExampleApp | undefined = await startExampleApp();
    const { databaseFile } = app.service;
    const url = app.url;
    let token: string;
    let userId: string;
    try {
      const jwks = JSON.parse(app.backend.env.get("JWKS")!) as { id: string }[];
      const removed = await app.backend.write(async (db) => {
        const rows = await db.query("jwks").collect();
        for (const row of rows) await db.delete(row._id);
        return rows.length;
      });
      expect(removed).toBe(jwks.length);

      ({ token, userId } = await app.signUp("static@example.com"));
      expect(decodeProtectedHeader(token).kid).toBe(jwks[0].id);
      expect((await app.call("query", "users:me", {}, token)).body.value._id).toBe(userId);
      // Signing made no key either: the table is still empty.
      expect(await app.backend.read((db) => db.query("jwks").collect())).toEqual([]);
    } finally {
      await app.close();
      app = undefined;
    }
    const { identity } = await authenticateOffline(databaseFile, url, token);
    expect(identity).toMatchObject({ subject: userId, userId });
  });
});

describe("dynamic keys (no JWKS variable)", () => {
  it("tokens verify through the key-set endpoint fetched over HTTP", async () => {
    const app = await startExampleApp({ staticKeys: false });
    const { databaseFile } = app.service;
    let token: string;
    try {
      expect(app.backend.env.get("JWKS")).toBeUndefined();
      const signedUp = await app.signUp("dynamic@example.com");
      token = signedUp.token;
      // The key was made on first use and stored in the jwks table.
      const rows = await app.backend.read((db) => db.query("jwks").collect());
      expect(rows).toHaveLength(1);
      expect(decodeProtectedHeader(token).kid).toBe(rows[0]._id);
      const published = await getJson(`${app.url}/api/auth/backend/jwks`);
      expect(published.body.keys.map((k: { kid: string }) => k.kid)).toEqual([rows[0]._id]);
      expect((await app.call("query", "users:me", {}, token)).body.value._id).toBe(signedUp.userId);
    } finally {
      await app.close();
    }
    // Without the server nobody publishes the key set, so verification fails: it did need HTTP.
    await expect(authenticateOffline(databaseFile, app.url, token)).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
  });
});

describe("auth:getLatestJwks from the CLI", () => {
  it(
    "prints the key set as a JSON array, generating keys when none exist, the same set afterwards",
    async () => {
      const databaseUrl = tempDatabaseFile();
      // Without SERVICE_AUTH_SECRET no key is made (it would be encrypted with a default secret).
      const refused = await cli(databaseUrl, ["run", "auth:getLatestJwks"]);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe("");
      expect(refused.stderr).toContain("npm run cli -- env sync --auth");

      const secret = "cli-secret-cli-secret-cli-secret-0123456";
      expect((await cli(databaseUrl, ["env", "set", "SERVICE_AUTH_SECRET", secret])).code).toBe(0);
      const first = await cli(databaseUrl, ["run", "auth:getLatestJwks"]);
      expect(first.code).toBe(0);
      const keys = JSON.parse(first.stdout);
      expect(Array.isArray(keys)).toBe(true);
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatchObject({ id: expect.any(String), alg: "RS256", createdAt: expect.any(Number) });
      expect(JSON.parse(keys[0].publicKey)).toMatchObject({ kty: "RSA" });
      // The private half is stored encrypted, never as a plain JWK.
      expect(JSON.parse(keys[0].privateKey)).not.toHaveProperty("d");
      // … with the configured secret.
      expect((await storedSigningKey(first.stdout, secret)).kid).toBe(keys[0].id);

      const second = await cli(databaseUrl, ["run", "auth:getLatestJwks"]);
      expect(second.code).toBe(0);
      expect(JSON.parse(second.stdout)).toEqual(keys);
    },
    PROCESS_TEST_TIMEOUT,
  );
});

describe("rotation with a running server", () => {
  it(
    "run auth:rotateKeys | env set JWKS: old tokens fail with Invalid token signature, new ones work",
    async () => {
      const databaseUrl = tempDatabaseFile();
      const server = await spawnExampleServer({ DATABASE_URL: databaseUrl, LOG_LEVEL: "info" });
      const query = (token: string) =>
        postJson(
          `${server.url}/api/query`,
          { path: "users:me", args: {} },
          { authorization: `Bearer ${token}` },
        );
      const signIn = async (path: string, body: object) => {
        const res = await fetch(`${server.url}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", origin: server.url },
          body: JSON.stringify(body),
        });
        expect(res.status).toBe(200);
        const jwt = res.headers.getSetCookie().find((c) => c.startsWith("service-auth.jwt="))!;
        return jwt.slice("service-auth.jwt=".length, jwt.indexOf(";"));
      };
      try {
        const oldToken = await signIn("/api/auth/sign-up/email", {
          email: "rotate@example.com",
          password: PASSWORD,
          name: "Rotate",
        });
        expect((await query(oldToken)).status).toBe(200);
        const oldKid = decodeProtectedHeader(oldToken).kid;

        const rotated = await cli(databaseUrl, ["run", "auth:rotateKeys"]);
        expect(rotated.code).toBe(0);
        const newKeys = JSON.parse(rotated.stdout) as { id: string }[];
        expect(newKeys.map((k) => k.id)).not.toContain(oldKid);
        const set = await cli(databaseUrl, ["env", "set", "JWKS"], rotated.stdout);
        expect(set.code).toBe(0);
        expect((await cli(databaseUrl, ["env", "get", "JWKS"])).stdout.trim()).toBe(rotated.stdout.trim());

        // The server notices the change without a restart.
        const res = await eventually(async () => {
          const r = await query(oldToken);
          expect(r.status).toBe(401);
          return r;
        });
        expect(res.body).toMatchObject({ code: "UNAUTHORIZED", message: "Invalid token signature" });

        const newToken = await signIn("/api/auth/sign-in/email", {
          email: "rotate@example.com",
          password: PASSWORD,
        });
        expect(decodeProtectedHeader(newToken).kid).toBe(newKeys[0].id);
        expect((await query(newToken)).body.value.email).toBe("rotate@example.com");
        expect((await query(oldToken)).status).toBe(401);
      } finally {
        await server.stop();
      }
    },
    PROCESS_TEST_TIMEOUT,
  );
});
