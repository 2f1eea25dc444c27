/**
 * The key actions (`src/auth/keys/functions.ts`) in a real backend, over a stand-in auth instance:
 * `getLatestJwks` and `rotateKeys` answer the auth's key set and refuse without
 * `SERVICE_AUTH_SECRET` before touching the auth (keys made with Better Auth's default secret would
 * not decrypt later); `checkOptions` initialises the auth and fails with it; all three are internal.
 * (The real Better Auth endpoints, from the CLI and a running server: `keys.test.ts`.)
 */
import { describe, expect, it, onTestFinished } from "vitest";
import type { KeyManagingAuth } from "../../src/auth/keys/functions.ts";
import { keyFunctions } from "../../src/auth/keys/functions.ts";
import type { BackendRuntime } from "../../src/backend/runtime.ts";
import { defineSchema } from "../../src/backend/schema.ts";
import type { ActionCtx } from "../../src/backend/server.ts";
import { startTestBackend } from "../helpers/service.ts";

process.env.LOG_LEVEL ??= "silent";

/** What the stand-in auth was asked, and what it answers. */
const calls: { endpoint: string; input: unknown; secret: string | undefined }[] = [];
let context: Promise<unknown> = Promise.resolve({});
let created = 0;

const createAuth = (ctx: ActionCtx): KeyManagingAuth => {
  created++;
  const secret = ctx.env.get("SERVICE_AUTH_SECRET");
  return {
    get $context() {
      calls.push({ endpoint: "$context", input: undefined, secret });
      return context;
    },
    api: {
      getLatestJwks: async (input) => {
        calls.push({ endpoint: "getLatestJwks", input, secret });
        return { jwks: '[{"id":"latest"}]' };
      },
      rotateKeys: async (input) => {
        calls.push({ endpoint: "rotateKeys", input, secret });
        return { jwks: '[{"id":"rotated"}]' };
      },
    },
  };
};

const internal = { allowInternal: true };

/**
 * A backend with the key actions, made inside the test: functions registered in a `beforeAll`
 * would make every mutant of `keyFunctions` static for Stryker (docs/mutation-testing.md).
 */
async function startBackend(secret: string | null = "s3cret"): Promise<BackendRuntime> {
  calls.length = 0;
  created = 0;
  context = Promise.resolve({});
  const backend = await startTestBackend({
    schema: defineSchema({}),
    modules: { auth: keyFunctions(createAuth) },
  });
  onTestFinished(() => backend.close());
  if (secret !== null) await backend.env.set("SERVICE_AUTH_SECRET", secret);
  return backend;
}

describe.each([
  // rotateKeys tells the endpoint who rotated and from where, for the audit trail.
  ["getLatestJwks", '[{"id":"latest"}]', {}],
  ["rotateKeys", '[{"id":"rotated"}]', { body: { actor: undefined, source: "cli" } }],
])("auth:%s", (name, jwks, input) => {
  it("answers the auth endpoint's JWKS value, created with the env's secret", async () => {
    const backend = await startBackend();
    expect(await backend.runAction(`auth:${name}`, {}, internal)).toBe(jwks);
    expect(calls).toEqual([{ endpoint: name, input, secret: "s3cret" }]);
  });

  it("refuses with BAD_REQUEST naming the variable and the command when SERVICE_AUTH_SECRET is unset", async () => {
    const backend = await startBackend(null);
    await expect(backend.runAction(`auth:${name}`, {}, internal)).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message:
        "SERVICE_AUTH_SECRET is not set; signing keys are encrypted with it. Create it first with: npm run cli -- env sync --auth",
    });
    // Refused before an auth instance (and its default secret) was made.
    expect(created).toBe(0);
    expect(calls).toEqual([]);
  });

  it("refuses an empty SERVICE_AUTH_SECRET too", async () => {
    const backend = await startBackend("");
    await expect(backend.runAction(`auth:${name}`, {}, internal)).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    expect(calls).toEqual([]);
  });

  it("is internal: a client cannot call it", async () => {
    const backend = await startBackend();
    await expect(backend.runAction(`auth:${name}`, {})).rejects.toMatchObject({ code: "FUNCTION_NOT_FOUND" });
    expect(calls).toEqual([]);
  });
});

describe("auth:checkOptions", () => {
  it("initialises the auth and answers null, with or without a secret", async () => {
    const backend = await startBackend();
    expect(await backend.runAction("auth:checkOptions", {}, internal)).toBeNull();
    await backend.env.remove("SERVICE_AUTH_SECRET");
    expect(await backend.runAction("auth:checkOptions", {}, internal)).toBeNull();
    expect(calls.map((c) => c.endpoint)).toEqual(["$context", "$context"]);
  });

  it("fails with the auth's initialisation error (a refused configuration fails at start)", async () => {
    const backend = await startBackend();
    context = Promise.reject(new Error("refused: advisory GHSA-x"));
    context.catch(() => {});
    await expect(backend.runAction("auth:checkOptions", {}, internal)).rejects.toThrow(
      "refused: advisory GHSA-x",
    );
  });

  it("waits for the initialisation to finish", async () => {
    const backend = await startBackend();
    let finish!: () => void;
    context = new Promise<void>((resolve) => {
      finish = resolve;
    });
    let settled = false;
    const run = backend.runAction("auth:checkOptions", {}, internal).then(() => {
      settled = true;
    });
    await Promise.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    finish();
    await run;
    expect(settled).toBe(true);
  });

  it("is internal: a client cannot call it", async () => {
    const backend = await startBackend();
    await expect(backend.runAction("auth:checkOptions", {})).rejects.toMatchObject({
      code: "FUNCTION_NOT_FOUND",
    });
  });
});
