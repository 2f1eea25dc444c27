/** Process signals for a running service (`npm start` and apps built like it). */
import type { RunningService } from "./api/service.ts";
import { logger } from "./logger.ts";

/**
 * The delay a stop by `signal` waits with `/healthz` at 503 before draining. The shutdown delay
 * lets load balancers route elsewhere during a deploy (SIGTERM, or any signal in production); a
 * Ctrl-C (SIGINT) in development has no balancer to wait for, so it stops at once.
 *
 * @example
 * ```ts
 * shutdownDelayFor("SIGTERM", 5_000); // 5000
 * shutdownDelayFor("SIGINT", 5_000); // 0 outside NODE_ENV=production, 5000 in it
 * ```
 */
export function shutdownDelayFor(
  signal: NodeJS.Signals,
  delayMs: number | undefined,
  nodeEnv = process.env.NODE_ENV,
): number | undefined {
  return signal === "SIGINT" && nodeEnv !== "production" ? 0 : delayMs;
}

/**
 * The first SIGTERM or SIGINT stops `service` gracefully and exits 0: `RunningService.close`
 * after its shutdown delay (load balancers route elsewhere first; none for a Ctrl-C outside
 * production, see {@link shutdownDelayFor}), then in-flight requests and calls finish. A second
 * signal exits at once with code 1.
 *
 * @example
 * ```ts
 * import { exitOnSignals, startService } from "service-auth/server";
 *
 * const service = await startService(app);
 * // SIGTERM / SIGINT: drain and exit 0; a second signal exits at once with 1.
 * exitOnSignals(service);
 * ```
 */
export function exitOnSignals(
  service: Pick<RunningService, "close"> & Partial<Pick<RunningService, "shutdownDelayMs">>,
  signals: readonly NodeJS.Signals[] = ["SIGTERM", "SIGINT"],
): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn(`${signal} again: exiting without waiting for requests in flight`);
      process.exit(1);
    }
    stopping = true;
    const delayMs = shutdownDelayFor(signal, service.shutdownDelayMs);
    logger.info(`${signal}: stopping`, delayMs ? { delayMs } : {});
    service.close({ delayMs }).then(
      () => process.exit(0),
      (error) => {
        logger.error("shutdown failed", { error: String(error) });
        process.exit(1);
      },
    );
  };
  for (const signal of signals) process.on(signal, onSignal);
}
