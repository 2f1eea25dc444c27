/** An app's registered functions by `module:name` path, and the check of a call's arguments. */
import { AppError } from "../errors.ts";
import { MAX_ARGS_DEPTH, nestsDeeperThan } from "../values/nesting.ts";
import { validate } from "../values/validate.ts";
import { closeMatches } from "./close-matches.ts";
import { type FunctionKind, isRegisteredFunction, type RegisteredFunction } from "./registered.ts";

/** Longest mistyped path compared with the registered ones for a "did you mean". */
const MAX_SUGGESTED_PATH_LENGTH = 200;

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

  /**
   * Registered function at `path`, or a 404 error (also for an internal one unless allowed) naming
   * the closest paths the caller may call (`No function "users:mee"; did you mean users:me?`).
   */
  lookup(path: string, kind?: FunctionKind, allowInternal = false): RegisteredFunction {
    const fn = this.functions.get(path);
    if (!fn || (fn.visibility === "internal" && !allowInternal)) {
      const matches = this.closePaths(path, kind, allowInternal);
      const hint = matches.length ? `; did you mean ${matches.join(", ")}?` : "";
      throw new AppError("FUNCTION_NOT_FOUND", `No function "${path}"${hint}`);
    }
    if (kind && fn.kind !== kind) {
      throw new AppError("FUNCTION_NOT_FOUND", `"${path}" is a ${fn.kind}, not a ${kind}`);
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

  /**
   * Paths close to a mistyped one, among those the caller may call (never an internal one for a
   * client); of `kind` when given. A path far longer than any registered one has no close match,
   * and is not compared: the edit distance costs the product of the lengths.
   */
  private closePaths(path: string, kind: FunctionKind | undefined, allowInternal: boolean): string[] {
    if (path.length > MAX_SUGGESTED_PATH_LENGTH) return [];
    const candidates = [...this.functions]
      .filter(([, fn]) => (allowInternal || fn.visibility !== "internal") && (!kind || fn.kind === kind))
      .map(([candidate]) => candidate);
    return closeMatches(path, candidates);
  }
}

/** `args` checked against `fn`'s validators (missing args are `{}`), or an INVALID_ARGUMENTS error. */
export function parseArgs(fn: RegisteredFunction, args: unknown): Record<string, unknown> {
  const value = args ?? {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new AppError("INVALID_ARGUMENTS", "args must be an object");
  }
  // Before the validator (and anything else) walks the value recursively.
  if (nestsDeeperThan(value, MAX_ARGS_DEPTH)) {
    throw new AppError("INVALID_ARGUMENTS", `args nest deeper than ${MAX_ARGS_DEPTH} levels`);
  }
  if (fn.args) validate({ kind: "object", fields: fn.args, isOptional: false }, value, "args");
  return value as Record<string, unknown>;
}
