/**
 * Better Auth's log output through the platform's JSON logger, so it gets the same redaction (no
 * emails, tokens or secrets; Better Auth logs e.g. `User not found { email }`) and obeys
 * `LOG_LEVEL` like every other line of the process.
 */
import type { BetterAuthOptions } from "better-auth";
import { logger } from "service-auth/server";

/** Better Auth's `logger` option. */
export type BetterAuthLogger = NonNullable<BetterAuthOptions["logger"]>;

/** An argument as a loggable value: an Error's own fields may carry request data, so only its name and message. */
function loggable(arg: unknown): unknown {
  return arg instanceof Error ? { name: arg.name, message: arg.message } : arg;
}

/**
 * A Better Auth `logger` option writing to the platform logger. Better Auth hands over everything
 * from `info` up; the platform logger then applies `LOG_LEVEL` (read per line, so it can change
 * at run time). `debug`, if an app lowers `level`, is written as `info`.
 */
export function betterAuthLogger(): BetterAuthLogger {
  return {
    level: "info",
    log(level, message, ...args) {
      const write = level === "error" ? logger.error : level === "warn" ? logger.warn : logger.info;
      write(message, { source: "better-auth", ...(args.length > 0 ? { details: args.map(loggable) } : {}) });
    },
  };
}
