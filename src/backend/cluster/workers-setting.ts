/** The `WORKERS` setting: how many server processes serve one port (cluster mode). */

/** Most workers allowed: far above any core count this is meant for, low enough to catch a typo. */
export const MAX_WORKERS = 256;

/**
 * `WORKERS` from the environment: unset or empty is 1 (one process, no cluster); otherwise a whole
 * number from 1 to {@link MAX_WORKERS}. Anything else refuses to start rather than guessing.
 */
export function workersSetting(env: Record<string, string | undefined> = process.env): number {
  const raw = env.WORKERS?.trim();
  if (!raw) return 1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_WORKERS) {
    throw new Error(`WORKERS must be a whole number from 1 to ${MAX_WORKERS}, not "${raw}"`);
  }
  return n;
}
