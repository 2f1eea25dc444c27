/**
 * `cli run [--as <email|userId>] <module:function> [json-args]`. Without `--as` the function runs
 * with the CLI's privilege (internal functions too); with `--as` it runs as that user through a
 * real session and JWT (the app's `runAs`), so steps 1+2 and the function's own checks apply.
 * An unknown name lists the closest function paths (the registry's lookup, as over HTTP).
 */
import type { BackendRuntime, Caller } from "../runtime.ts";
import type { RuntimeServiceOptions } from "../service.ts";
import { describe } from "../values/validate.ts";
import type { Validator } from "../values/validators.ts";

/** A mistake in how the command was called (exit code 2, usage printed). */
export class UsageError extends Error {}

function parseRunArgs(argv: string[]): { as?: string; path: string; args: unknown } {
  const rest = argv.filter((a) => a !== SHOW_SECRETS);
  let as: string | undefined;
  const at = rest.indexOf("--as");
  if (at !== -1) {
    as = rest[at + 1];
    if (!as || as.startsWith("--")) throw new UsageError("--as needs an email or user id");
    rest.splice(at, 2);
  }
  const [path, json] = rest;
  if (!path) throw new UsageError("run needs a function path");
  let args: unknown = {};
  if (json !== undefined) {
    try {
      args = JSON.parse(json);
    } catch {
      throw new UsageError('args must be JSON, e.g. \'{"email":"a@b.c"}\'');
    }
  }
  return { as, path, args };
}

export const RUN_USAGE = `usage: service-auth run [--as <email|userId>] [--show-secrets] <module:function> [json-args]
  Runs the function once and prints its value on stdout (logs go to stderr).
  --as EMAIL|ID   runs it as that user, through a real session and token
  --show-secrets  prints private keys, secrets and passwords in the value to a terminal too
                  (hidden there by default; a pipe or file always gets the whole value)
  --help          prints this and the function's arguments, without running it`;

/** The flag that lets secrets in a value reach a terminal. */
export const SHOW_SECRETS = "--show-secrets";

/** Field names whose values stay off a terminal unless asked for (a key set's `privateKey`, …). */
const SECRET_FIELD = /private|secret|password/i;

/**
 * `value` with the values of secret-looking fields replaced, nested ones and those inside a
 * string that holds JSON (e.g. a `JWKS` key set) included, and how many were hidden.
 */
export function hideSecrets(value: unknown): { value: unknown; hidden: number } {
  let hidden = 0;
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== "object") return v;
    return Object.fromEntries(
      Object.entries(v).map(([k, inner]) => {
        if (!SECRET_FIELD.test(k)) return [k, walk(inner)];
        hidden++;
        return [k, "[hidden]"];
      }),
    );
  };
  if (typeof value === "string" && /^\s*[[{]/.test(value)) {
    try {
      const masked = walk(JSON.parse(value));
      return hidden > 0 ? { value: JSON.stringify(masked), hidden } : { value, hidden };
    } catch {
      return { value, hidden: 0 };
    }
  }
  const masked = walk(value);
  return { value: hidden > 0 ? masked : value, hidden };
}

/** Whether `argv` asks for help (anywhere: `run auth:rotateKeys --help` must never run it). */
export function asksForHelp(argv: readonly string[]): boolean {
  return argv.some((a) => a === "--help" || a === "-h");
}

/**
 * The help of `run`, and of the function named in `argv` when there is one: its kind, whether
 * only the CLI and server code may call it, and its arguments. Runs nothing.
 */
export function runHelp(
  backend: {
    lookup(
      path: string,
      kind: undefined,
      allowInternal: boolean,
    ): { kind: string; visibility: string; args?: Record<string, Validator> };
  },
  argv: readonly string[],
): string {
  const path = argv.find((a, i) => !a.startsWith("-") && argv[i - 1] !== "--as" && !a.startsWith("{"));
  if (!path) return RUN_USAGE;
  // An unknown path throws FUNCTION_NOT_FOUND naming the closest ones.
  const fn = backend.lookup(path, undefined, true);
  const args = Object.entries(fn.args ?? {});
  const lines = [
    `${path}: ${fn.visibility === "internal" ? "internal " : ""}${fn.kind}`,
    args.length === 0
      ? "  no arguments"
      : `  arguments (as JSON): ${args.map(([name, validator]) => `${name}${validator.isOptional ? "?" : ""}: ${describe(validator)}`).join(", ")}`,
  ];
  return `${lines.join("\n")}\n\n${RUN_USAGE}`;
}

/** Runs the command; returns the function's value. */
export async function runCommand(
  backend: BackendRuntime,
  app: RuntimeServiceOptions,
  argv: string[],
): Promise<unknown> {
  const { as, path, args } = parseRunArgs(argv);
  // An unknown path throws FUNCTION_NOT_FOUND naming the closest ones.
  const fn = backend.lookup(path, undefined, true);
  let session: { token: string; end(): Promise<void> } | undefined;
  if (as) {
    if (!app.runAs) throw new UsageError("--as needs an app with auth (ServiceOptions.runAs)");
    session = await app.runAs(backend, as);
  }
  const caller: Caller = session ? { token: session.token } : { allowInternal: true };
  try {
    if (fn.kind === "query") return (await backend.runQuery(path, args, caller)).value;
    if (fn.kind === "mutation") return (await backend.runMutation(path, args, caller)).value;
    return await backend.runAction(path, args, caller);
  } finally {
    await session?.end();
  }
}
