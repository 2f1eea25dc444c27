/**
 * Typed function references: `api.messages.list` is a reference to `messages:list` whose args and
 * return types come from the registered function. At runtime a reference is just its path.
 */
import type { FunctionKind, RegisteredFunction, Visibility } from "./registered.ts";

export const PATH = Symbol.for("service-auth.functionPath");

/**
 * A typed reference to a registered function (`api.messages.send`): its kind, visibility,
 * argument and return types; at runtime only its `module:name` path.
 *
 * @example
 * ```ts
 * import type { Backend, FunctionReference } from "service-auth/server";
 *
 * async function callQuery<R extends FunctionReference<"query">>(backend: Backend, ref: R, args: R["_args"]) {
 *   return (await backend.runQuery(ref, args)) as R["_returns"];
 * }
 * ```
 */
export interface FunctionReference<
  K extends FunctionKind = FunctionKind,
  V extends Visibility = Visibility,
  Args = any,
  Returns = any,
> {
  readonly [PATH]: string;
  readonly _kind?: K;
  readonly _visibility?: V;
  readonly _args: Args;
  readonly _returns: Returns;
}

type RefOf<F> =
  F extends RegisteredFunction<infer K, infer V, infer A, infer R> ? FunctionReference<K, V, A, R> : never;

type FilterVisibility<M, V extends Visibility> = {
  [F in keyof M as M[F] extends RegisteredFunction<any, V, any, any> ? F : never]: RefOf<M[F]>;
};

/**
 * `api` type: public functions of each module.
 *
 * @example
 * ```ts
 * import { type ApiOf, anyApi } from "service-auth/server";
 * import * as messages from "./messages.ts";
 * import * as users from "./users.ts";
 *
 * export const modules = { messages, users };
 * export const api: ApiOf<typeof modules> = anyApi;
 * // api.messages.send: a typed reference to the public mutation `messages:send`.
 * ```
 */
export type ApiOf<Modules> = { [M in keyof Modules]: FilterVisibility<Modules[M], "public"> };
/**
 * `internal` type: internal functions of each module.
 *
 * @example
 * ```ts
 * import { anyApi, type InternalApiOf } from "service-auth/server";
 *
 * export const internal: InternalApiOf<typeof modules> = anyApi;
 * // internal.users.setRole: a typed reference to the internal mutation `users:setRole`.
 * ```
 */
export type InternalApiOf<Modules> = { [M in keyof Modules]: FilterVisibility<Modules[M], "internal"> };

function referenceProxy(parts: string[]): any {
  return new Proxy(
    {},
    {
      get(_target, prop) {
        if (prop === PATH) {
          if (parts.length < 2) throw new Error("A function reference needs a module and a function name");
          return `${parts.slice(0, -1).join("/")}:${parts[parts.length - 1]}`;
        }
        if (typeof prop !== "string") return undefined;
        if (prop === "then") return undefined; // not a thenable
        return referenceProxy([...parts, prop]);
      },
    },
  );
}

/**
 * Untyped references; cast to `ApiOf<typeof modules>` in the app.
 *
 * @example
 * ```ts
 * import { type ApiOf, anyApi, type InternalApiOf } from "service-auth/server";
 *
 * export const api: ApiOf<typeof modules> = anyApi;
 * export const internal: InternalApiOf<typeof modules> = anyApi;
 * ```
 */
export const anyApi: any = referenceProxy([]);

/**
 * The `module:name` path of a reference (or a path string given as is).
 * @example
 * ```ts
 * functionPath(api.messages.list); // "messages:list"
 * functionPath("messages:list"); // "messages:list"
 * ```
 */
export function functionPath(ref: FunctionReference | string): string {
  if (typeof ref === "string") return ref;
  const path = (ref as any)?.[PATH];
  if (typeof path !== "string") throw new Error("Not a function reference");
  return path;
}

/** A reference from a path string, e.g. from the CLI. */
export function makeReference<K extends FunctionKind = FunctionKind>(path: string): FunctionReference<K> {
  return { [PATH]: path } as FunctionReference<K>;
}
