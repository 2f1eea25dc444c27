/**
 * Key rotation vs. the per-token identity cache: a steps-1+2 result verified under the old key set
 * must not be stored once the key set changed, or the old token keeps working until its `exp`.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { IdentityResolver } from "../../src/backend/runtime.ts";
import { startTestBackend } from "../helpers/service.ts";
import { AUDIENCE, ISSUER, makeKeys, resolveIdentity, signToken } from "../sync/fixtures/auth.ts";
import * as messages from "../sync/fixtures/messages.ts";
import schema from "../sync/fixtures/schema.ts";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe("identity cache across a key rotation", () => {
  it("does not cache a result verified under the key set that a rotation replaced", async () => {
    const oldKeys = await makeKeys("old");
    const newKeys = await makeKeys("new");
    // Step 2 waits on a gate, so the rotation lands while a request with the old token is in flight.
    let gate: Promise<void> = Promise.resolve();
    let entered: () => void = () => {};
    const gated: IdentityResolver = async (claims, ctx) => {
      entered();
      await gate;
      return resolveIdentity(claims, ctx);
    };
    const backend = await startTestBackend({
      schema,
      modules: { messages },
      auth: (env) => ({
        providers: [{ issuer: ISSUER, audience: AUDIENCE, getJwks: () => env.get("JWKS") }],
        resolveIdentity: gated,
      }),
    });
    closers.push(() => backend.close());
    await backend.env.set("JWKS", JSON.stringify({ keys: [oldKeys.jwk] }));
    const userId = await backend.write((db) => db.insert("users", { name: "a", banned: false }));
    const sessionId = await backend.write((db) =>
      db.insert("sessions", { userId, expiresAt: Date.now() + 3_600_000 }),
    );
    const token = await signToken(oldKeys, { sub: userId, sessionId });

    let open: () => void = () => {};
    gate = new Promise((resolve) => (open = resolve));
    const inStep2 = new Promise<void>((resolve) => (entered = resolve));
    const inFlight = backend.authenticate(token);
    // Should step 1 refuse the token, fail now rather than wait for step 2 forever.
    await Promise.race([inStep2, inFlight.then(() => Promise.reject(new Error("step 2 never ran")))]);
    await backend.env.set("JWKS", JSON.stringify({ keys: [newKeys.jwk] })); // rotation
    open();
    await inFlight; // verified before the rotation: this one request may pass

    await expect(backend.authenticate(token)).rejects.toMatchObject({
      code: "UNAUTHORIZED",
      message: "Invalid token signature",
    });
    // The same holds for a function call carrying the token.
    await expect(backend.runQuery("messages:whoami", {}, { token })).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
  });
});
