/**
 * What a registered function is: plain data the runtime executes. A leaf module, so the builders
 * (define.ts) and the typed references (references.ts) both build on it without importing each other.
 */
import type { PropertyValidators } from "../values/validators.ts";

export type FunctionKind = "query" | "mutation" | "action";
export type Visibility = "public" | "internal";

/**
 * A function the runtime can execute. `Args`/`Returns` are phantom types for references.
 *
 * @example
 * ```ts
 * import type { RegisteredFunction } from "service-auth/server";
 *
 * import * as messages from "./messages.ts";
 *
 * // What `query(...)`, `mutation(...)` and `action(...)` return; modules export them by name.
 * function isPublic(fn: RegisteredFunction): boolean {
 *   return fn.visibility === "public";
 * }
 * isPublic(messages.send); // true
 * ```
 */
export interface RegisteredFunction<
  K extends FunctionKind = FunctionKind,
  V extends Visibility = Visibility,
  Args = any,
  Returns = any,
> {
  readonly kind: K;
  readonly visibility: V;
  readonly args?: PropertyValidators;
  readonly handler: (ctx: any, args: any) => unknown;
  /** Phantom types, never set at runtime. */
  readonly _args?: Args;
  readonly _returns?: Returns;
}

/** Whether a module export is a query, mutation or action (the runtime registers only those). */
export function isRegisteredFunction(value: unknown): value is RegisteredFunction {
  return (
    typeof value === "object" &&
    value !== null &&
    ["query", "mutation", "action"].includes((value as RegisteredFunction).kind) &&
    typeof (value as RegisteredFunction).handler === "function"
  );
}
