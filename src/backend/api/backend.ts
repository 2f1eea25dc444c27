/**
 * The running backend as applications and the auth integration see it: its environment, action
 * contexts and calls of registered functions. This interface is the contract; the runtime class
 * behind it (`BackendRuntime` in `../runtime.ts`, with its storage engine and catalog) is not
 * exported by any entry point.
 */
import type { ActionCtx, EnvReader, RequestMeta, UserIdentity } from "../functions/define.ts";
import type { FunctionReference } from "../functions/references.ts";

/**
 * The backend's environment variables (SPEC §5): stored in the database so every instance sees
 * the same values; a process environment variable of the same name overrides the stored one.
 *
 * @example
 * ```ts
 * if (!backend.env.get("JWKS")) await backend.env.set("JWKS", jwks);
 * const names = backend.env.stored().map(([name]) => name);
 * ```
 */
export interface BackendEnv extends EnvReader {
  /** The value of `name`: the process environment's, else the stored one, else a default. */
  get(name: string): string | undefined;
  /** The stored variables as `[name, value]` pairs (not the process environment's). */
  stored(): [string, string][];
  /** Stores `name` for every instance (they see it within about two seconds). */
  set(name: string, value: string): Promise<void>;
  /** Stores `value` unless `name` is stored already; resolves with the value that is stored. */
  setIfAbsent(name: string, value: string): Promise<string>;
  /** Deletes the stored `name`; resolves with whether it was stored. */
  remove(name: string): Promise<boolean>;
  /** Calls `listener` after the variables changed (here or on another instance); returns the unsubscribe. */
  onChange(listener: () => void): () => void;
}

/**
 * Who a server-side call runs as. Without `token` or `identity` the call is anonymous.
 *
 * @example
 * ```ts
 * await backend.runQuery("users:me", {}, { token }); // as the token's user (steps 1 and 2)
 * await backend.runMutation("users:setRole", { email, role: "admin" }, { allowInternal: true });
 * ```
 */
export interface CallOptions {
  /** A backend JWT: the call runs as its user, after the same checks as a client's request. */
  token?: string | null;
  /** An identity established already (it is not checked again). */
  identity?: UserIdentity | null;
  /** What a function sees as `ctx.meta` (e.g. the client's address for rate limits). */
  meta?: RequestMeta;
  /** Whether internal functions (`internalQuery`, …) may be called, as the CLI and server code may. */
  allowInternal?: boolean;
}

/**
 * A started backend, as `startService` hands it to `routes`, `prepare`, `runAs` and the other
 * callbacks of `ServiceOptions`, and as `RunningService.backend`.
 *
 * @example
 * ```ts
 * const service = await startService({
 *   schema,
 *   modules,
 *   prepare: async (backend) => {
 *     if (!backend.env.get("SITE_URL")) await backend.env.set("SITE_URL", "http://localhost:3000");
 *   },
 * });
 * const { value } = await service.backend.runQuery("users:count", {});
 * ```
 */
export interface Backend {
  /** Environment variables, shared by every instance through the database. */
  readonly env: BackendEnv;
  /** Runs a query in one read snapshot. */
  runQuery(
    ref: FunctionReference | string,
    args: unknown,
    options?: CallOptions,
  ): Promise<{ value: unknown }>;
  /** Runs a mutation as one transaction. */
  runMutation(
    ref: FunctionReference | string,
    args: unknown,
    options?: CallOptions,
  ): Promise<{ value: unknown }>;
  /** Runs an action. */
  runAction(ref: FunctionReference | string, args: unknown, options?: CallOptions): Promise<unknown>;
  /**
   * The `ctx` an action gets, for server code that calls functions the way an action does
   * (its calls may reach internal functions). With `eager` (default), the caller's identity is
   * resolved before this resolves; otherwise when first asked for.
   */
  actionCtx(options: CallOptions, eager?: boolean): Promise<ActionCtx>;
}
