/** Why the HTTP server could not listen, for the operator: the port, and the `PORT` setting that moves it. */
import { StartRefusal } from "../start-refusal.ts";

/**
 * The port is taken (`EADDRINUSE`) or not ours to take (`EACCES`); `code` stays Node's.
 *
 * @example
 * ```ts
 * import { PortRefusal, startService } from "service-auth/server";
 *
 * try {
 *   await startService({ ...app, port: 3000 });
 * } catch (error) {
 *   if (error instanceof PortRefusal) console.error(`port ${error.port}: ${error.code}`); // e.g. EADDRINUSE
 *   throw error;
 * }
 * ```
 */
export class PortRefusal extends StartRefusal {
  override name = "PortRefusal";
  readonly code: string;
  constructor(
    readonly port: number,
    hostname: string | undefined,
    cause: NodeJS.ErrnoException,
    /** The setting that chooses this port (`PORT`, `METRICS_PORT`). */
    setting = "PORT",
  ) {
    const where = hostname ? `${hostname}:${port}` : `port ${port}`;
    const why =
      cause.code === "EADDRINUSE"
        ? `${where} is already in use by another process`
        : `no permission to listen on ${where} (ports below 1024 need privileges)`;
    super(
      `cannot listen: ${why}\n    fix: stop the other process, or choose another port with the ${setting} setting (e.g. ${setting}=${setting === "PORT" ? 3001 : 9464})`,
      {
        cause,
      },
    );
    this.code = cause.code ?? "";
  }
}

/** `error` as the start reports it: a taken or forbidden port becomes a {@link PortRefusal}. */
export function listenErrorOf(
  error: NodeJS.ErrnoException,
  port: number,
  hostname: string | undefined,
  setting = "PORT",
): Error {
  return error.code === "EADDRINUSE" || error.code === "EACCES"
    ? new PortRefusal(port, hostname, error, setting)
    : error;
}
