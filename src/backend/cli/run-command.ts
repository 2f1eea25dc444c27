/**
 * `cli run [--as <email|userId>] <module:function> [json-args]`. Without `--as` the function runs
 * with the CLI's privilege (internal functions too); with `--as` it runs as that user through a
 * real session and JWT (the app's `runAs`), so steps 1+2 and the function's own checks apply.
 * An unknown name lists the closest function paths (the registry's lookup, as over HTTP).
 */
import type { BackendRuntime, Caller } from "../runtime.ts";
import type { ServiceOptions } from "../service.ts";

/** A mistake in how the command was called (exit code 2, usage printed). */
export class UsageError extends Error {}

function parseRunArgs(argv: string[]): { as?: string; path: string; args: unknown } {
  const rest = [...argv];
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

/** Runs the command; returns the function's value. */
export async function runCommand(
  backend: BackendRuntime,
  app: ServiceOptions,
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
