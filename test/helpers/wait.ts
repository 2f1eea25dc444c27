/**
 * Waiting in tests: on a condition, never on a time margin. A loaded machine makes everything
 * slower, so a deadline here only bounds how long a failing test takes to say why; it is not
 * part of what a test asserts.
 */

/** How long {@link eventually} and the socket helpers wait for a condition before failing. */
export const WAIT_MS = 20_000;

/** Resolves with `check`'s result once it stops throwing (polled), or rethrows its error after `timeoutMs`. */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = WAIT_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

/**
 * Lets at least `ms` of real time pass (e.g. past a token's `exp`). Only ever a lower bound: never
 * use it to wait for something to happen — that is {@link eventually}.
 */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
