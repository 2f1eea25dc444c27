/**
 * A start the operator must fix (a setting, the database, the port): its message is the whole
 * report, written for a person, so entry points print it as it is and exit 1, without a stack.
 *
 * @example
 * ```ts
 * import { StartRefusal, startService } from "service-auth/server";
 *
 * try {
 *   await startService(app);
 * } catch (error) {
 *   if (error instanceof StartRefusal) {
 *     process.stderr.write(`${error.message}\n`); // the whole report, no stack trace
 *     process.exit(1);
 *   }
 *   throw error;
 * }
 * ```
 */
export class StartRefusal extends Error {
  override name = "StartRefusal";
}
