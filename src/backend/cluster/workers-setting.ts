/** The `WORKERS` setting: how many server processes serve one port (cluster mode). */
import { SettingError, settingProblem } from "../settings/problems.ts";

/** Most workers allowed: far above any core count this is meant for, low enough to catch a typo. */
export const MAX_WORKERS = 256;

/**
 * `WORKERS` from the environment: unset or empty is 1 (one process, no cluster); otherwise a whole
 * number from 1 to {@link MAX_WORKERS}. Anything else throws a `SettingError` rather than guessing.
 *
 * @example
 * ```ts
 * import { startService, workersSetting } from "service-auth/server";
 *
 * // WORKERS=4 → 4 worker processes; unset → 1 (no cluster).
 * const service = await startService({ ...app, workers: workersSetting() });
 * ```
 */
export function workersSetting(env: Record<string, string | undefined> = process.env): number {
  const raw = env.WORKERS?.trim();
  if (!raw) return 1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_WORKERS) {
    throw new SettingError(
      settingProblem(
        "WORKERS",
        env.WORKERS,
        `not a whole number from 1 to ${MAX_WORKERS}`,
        "set WORKERS=2 (or the number of cores), or unset it for one process",
      ),
    );
  }
  return n;
}
