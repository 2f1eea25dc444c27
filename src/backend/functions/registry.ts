/** An app's registered functions by `module:name` path, and the check of a call's arguments. */
import { ServiceError } from "../errors.ts";
import { MAX_ARGS_DEPTH, nestsDeeperThan } from "../values/nesting.ts";
import { validate } from "../values/validate.ts";
import { type FunctionKind, isRegisteredFunction, type RegisteredFunction } from "./registered.ts";

export class FunctionRegistry {
  private readonly functions = new Map<string, RegisteredFunction>();

  /** @param modules `{ messages: { list, send }, "admin/users": {...} }`; other exports are ignored. */
  constructor(modules: Record<string, Record<string, unknown>>) {
    for (const [moduleName, exports] of Object.entries(modules)) {
      for (const [name, value] of Object.entries(exports)) {
        if (isRegisteredFunction(value)) this.functions.set(`${moduleName}:${name}`, value);
      }
    }
  }

  /** Registered function at `path`, or a 404 error (also for an internal one unless allowed). */
  lookup(path: string, kind?: FunctionKind, allowInternal = false): RegisteredFunction {
    const fn = this.functions.get(path);
    if (!fn || (fn.visibility === "internal" && !allowInternal)) {
      throw new ServiceError("FUNCTION_NOT_FOUND", `No function "${path}"`);
    }
    if (kind && fn.kind !== kind) {
      throw new ServiceError("FUNCTION_NOT_FOUND", `"${path}" is a ${fn.kind}, not a ${kind}`);
    }
    return fn;
  }

  /** Whether a function (public or internal) is registered at `path`. */
  has(path: string): boolean {
    return this.functions.has(path);
  }

  paths(): string[] {
    return [...this.functions.keys()];
  }
}

/** `args` checked against `fn`'s validators (missing args are `{}`), or an INVALID_ARGUMENTS error. */
export function parseArgs(fn: RegisteredFunction, args: unknown): Record<string, unknown> {
  const value = args ?? {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new ServiceError("INVALID_ARGUMENTS", "args must be an object");
  }
  // Before the validator (and anything else) walks the value recursively.
  if (nestsDeeperThan(value, MAX_ARGS_DEPTH)) {
    throw new ServiceError("INVALID_ARGUMENTS", `args nest deeper than ${MAX_ARGS_DEPTH} levels`);
  }
  if (fn.args) validate({ kind: "object", fields: fn.args, isOptional: false }, value, "args");
  return value as Record<string, unknown>;
}
