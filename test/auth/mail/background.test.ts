/**
 * `answeringMailFailures` (src/auth/plugins/backend/background.ts), the `backend` plugin's replacement of
 * Better Auth's `runInBackgroundOrAwait`: which failures end the request and which stay Better
 * Auth's (handed to its own function, which logs them). The flows over a real SMTP server are in
 * email-flows.test.ts.
 */
import { describe, expect, it } from "vitest";
import { mailUnavailable } from "../../../src/auth/mail/unavailable.ts";
import { answeringMailFailures } from "../../../src/auth/plugins/backend/background.ts";

/** Better Auth's context as far as the override uses it; `handed` records what reached Better Auth's own function. */
function context(backgroundHandler?: (p: Promise<unknown>) => void) {
  const handed: unknown[] = [];
  const ctx = {
    options: { advanced: backgroundHandler ? { backgroundTasks: { handler: backgroundHandler } } : {} },
    async runInBackgroundOrAwait(promise: unknown) {
      handed.push(promise);
      // Better Auth 1.4.9: awaits and logs whatever is thrown.
      await Promise.resolve(promise).catch(() => {});
    },
  };
  return { ctx, handed, override: answeringMailFailures(ctx) };
}

describe("answeringMailFailures", () => {
  it("rethrows a mail failure the request answers with, without handing it to Better Auth", async () => {
    const { override, handed } = context();
    const failure = mailUnavailable(true);
    await expect(override.runInBackgroundOrAwait(Promise.reject(failure))).rejects.toBe(failure);
    expect(handed).toEqual([]);
  });

  it("hands every other failure to Better Auth's own function, and the request goes on", async () => {
    const { override, handed } = context();
    await expect(
      override.runInBackgroundOrAwait(Promise.reject(mailUnavailable(false))),
    ).resolves.toBeUndefined();
    await expect(
      override.runInBackgroundOrAwait(Promise.reject(new Error("other"))),
    ).resolves.toBeUndefined();
    expect(handed).toHaveLength(2);
  });

  it("waits for a send that succeeds", async () => {
    const { override } = context();
    let sent = false;
    await override.runInBackgroundOrAwait(Promise.resolve().then(() => (sent = true)));
    expect(sent).toBe(true);
  });

  it("with the app's background handler, leaves the promise to Better Auth (sent after the answer)", async () => {
    const { override, handed } = context(() => {});
    const failing = Promise.reject(mailUnavailable(true));
    await expect(override.runInBackgroundOrAwait(failing)).resolves.toBeUndefined();
    expect(handed).toEqual([failing]);
  });
});
