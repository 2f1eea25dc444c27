/**
 * The audit trail's retention: events older than `AUDIT_RETENTION_DAYS` (default 90) are deleted
 * by a sweep the server process runs itself (there is no scheduler yet), a bounded batch per
 * transaction so no sweep holds the write lock for long. Every instance sweeps; they delete the
 * same old rows, which is harmless.
 */
import { type Backend, type FunctionReference, logger } from "service-auth/server";
import { MAX_PRUNE_BATCH } from "./functions.ts";

export const AUDIT_RETENTION_VAR = "AUDIT_RETENTION_DAYS";
export const DEFAULT_AUDIT_RETENTION_DAYS = 90;
/** How often the sweep runs (and how soon after start it first does). */
export const AUDIT_SWEEP_INTERVAL_MS = 60 * 60 * 1000;
const FIRST_SWEEP_MS = 30_000;
/** Batches one sweep deletes at most; the rest waits for the next sweep. */
const MAX_BATCHES_PER_SWEEP = 50;
const DAY_MS = 24 * 60 * 60 * 1000;

/** `AUDIT_RETENTION_DAYS` from the env store: a positive whole number of days. */
export function auditRetentionDays(env: { get(name: string): string | undefined }): number {
  const text = env.get(AUDIT_RETENTION_VAR);
  if (text === undefined || text === "") return DEFAULT_AUDIT_RETENTION_DAYS;
  const days = Number(text);
  if (!Number.isSafeInteger(days) || days < 1)
    throw new Error(`${AUDIT_RETENTION_VAR} must be a whole number of days (at least 1)`);
  return days;
}

/** One sweep: deletes events older than the retention, in batches; returns how many it deleted. */
export async function sweepAuditEvents(
  backend: Backend,
  prune: FunctionReference<"mutation"> | string,
  now = Date.now(),
  batch = MAX_PRUNE_BATCH,
): Promise<number> {
  const before = now - auditRetentionDays(backend.env) * DAY_MS;
  let total = 0;
  for (let i = 0; i < MAX_BATCHES_PER_SWEEP; i++) {
    const { value } = await backend.runMutation(prune, { before, batch }, { allowInternal: true });
    const deleted = value as number;
    total += deleted;
    if (deleted < batch) break;
  }
  return total;
}

/**
 * Starts the periodic sweep (first run shortly after start, then every hour); returns its stop
 * function, which waits for a sweep in progress. Pass it as the service's `background`.
 */
export function auditRetention(
  prune: FunctionReference<"mutation"> | string,
  intervalMs = AUDIT_SWEEP_INTERVAL_MS,
) {
  return (backend: Backend) => {
    let running: Promise<void> | undefined;
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const run = () => {
      running = sweepAuditEvents(backend, prune)
        .then((deleted) => {
          if (deleted > 0) logger.info("audit trail: old events deleted", { deleted });
        })
        .catch((error) => logger.warn("audit trail: retention sweep failed", { error: String(error) }))
        .finally(() => {
          running = undefined;
          if (!stopped) schedule(intervalMs);
        });
    };
    const schedule = (ms: number) => {
      timer = setTimeout(run, ms);
      timer.unref();
    };
    schedule(Math.min(FIRST_SWEEP_MS, intervalMs));
    return async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    };
  };
}
