/** Process signals for a running service (`npm start` and apps built like it). */
import { logger } from "./logger.ts";
import type { RunningService } from "./service.ts";

/**
 * The first SIGTERM or SIGINT stops `service` gracefully and exits 0: `RunningService.close`
 * after its shutdown delay (load balancers route elsewhere first), then in-flight requests and
 * calls finish. A second signal exits at once with code 1.
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
    logger.info(`${signal}: stopping`);
    service.close({ delayMs: service.shutdownDelayMs }).then(
      () => process.exit(0),
      (error) => {
        logger.error("shutdown failed", { error: String(error) });
        process.exit(1);
      },
    );
  };
  for (const signal of signals) process.on(signal, onSignal);
}
