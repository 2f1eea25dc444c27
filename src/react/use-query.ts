/**
 * Live query hooks: `useQuery`, `useQueryResult` and `usePreloadedQuery`.
 *
 * Errors: `useQuery` and `usePreloadedQuery` **throw** a failed query's error (a `BackendError`
 * with a `code`) to the nearest React error boundary, so components only handle data and
 * loading; resetting the boundary remounts and subscribes again. `useQueryResult` returns the
 * error instead, for components that render it themselves.
 */
import { useEffect, useMemo, useRef, useSyncExternalStore } from "react";
import type { FunctionReference } from "../backend/functions/references.ts";
import type { BackendError } from "../client/client.ts";
import { functionPath, queryKey } from "../client/function-path.ts";
import type { Preloaded } from "../client/server-rendering.ts";
import { useBackendContext } from "./context.ts";
import { QueryStore } from "./query-store.ts";

type QueryRef = FunctionReference<"query", "public">;

/**
 * The args of `Q`, or `"skip"` to not subscribe; optional when `Q` takes no arguments.
 * @example
 * ```ts
 * // The rest parameters of useQuery: the query's args, or "skip" to not subscribe.
 * const rest: QueryArgsOrSkip<typeof api.messages.list> = isAuthenticated ? [{}] : ["skip"];
 * const messages = useQuery(api.messages.list, ...rest);
 * ```
 */
export type QueryArgsOrSkip<Q extends QueryRef> = {} extends Q["_args"]
  ? [args?: Q["_args"] | "skip"]
  : [args: Q["_args"] | "skip"];

/**
 * What {@link useQueryResult} returns: the latest value, the query's error, and whether the first
 * result is still loading.
 * @example
 * ```tsx
 * function Messages() {
 *   const { value, error, isLoading }: QueryResult<Message[]> = useQueryResult(api.messages.list);
 *   if (error) return <p role="alert">{error.message}</p>;
 *   if (isLoading) return <p>Loading…</p>;
 *   return <ul>{value?.map((m) => <li key={m._id}>{m.body}</li>)}</ul>;
 * }
 * ```
 */
export interface QueryResult<T> {
  /** The latest result, undefined while loading or skipped. */
  value: T | undefined;
  /** The query's error (the value then stays the last good one, if any). */
  error: BackendError | undefined;
  /** No result yet and no error, and not skipped. */
  isLoading: boolean;
}

/**
 * Subscribes to `path` with `args` while mounted: one subscription per args *value*, re-made
 * when it changes, held back while the auth provider is still resolving the user, and re-made
 * after the identity changes (whose old results are dropped). `seed` is shown until the first
 * result, unless the identity changed since mount (it was rendered for the previous user).
 */
function useLiveQuery(
  path: string,
  args: unknown,
  skip: boolean,
  seed?: { value: unknown },
): QueryResult<unknown> {
  const { client, auth } = useBackendContext();
  const authState = useSyncExternalStore(auth.subscribe, auth.getSnapshot, auth.getSnapshot);
  const key = skip ? null : queryKey(path, args);
  const identityAtMount = useRef(authState.identity).current;
  const seedNow = seed && authState.identity === identityAtMount ? seed : undefined;

  // Created per (query, identity); args and seed are read from the render that creates it.
  // biome-ignore lint/correctness/useExhaustiveDependencies: keyed by the args' value, not identity
  const store = useMemo(
    () => new QueryStore(path, (args ?? {}) as Record<string, unknown>, seedNow),
    [client, key, authState.identity],
  );
  const state = useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);

  const active = key !== null && !authState.isLoading;
  useEffect(() => {
    if (!active) return;
    return store.connect(client);
  }, [store, client, active]);

  if (skip) return { value: undefined, error: undefined, isLoading: false };
  return { value: state.value, error: state.error, isLoading: !state.hasValue && !state.error };
}

/**
 * A live query's result and error without throwing. Pass `"skip"` as args to not subscribe
 * (e.g. until the user is signed in).
 * @example
 * ```tsx
 * function Messages() {
 *   const { value, error, isLoading } = useQueryResult(api.messages.list, {});
 *   if (error) return <p role="alert">Could not load messages ({error.code})</p>;
 *   if (isLoading) return <p>Loading…</p>;
 *   return <ul>{value?.map((m) => <li key={m._id}>{m.body}</li>)}</ul>;
 * }
 * ```
 */
export function useQueryResult<Q extends QueryRef>(
  ref: Q,
  ...rest: QueryArgsOrSkip<Q>
): QueryResult<Q["_returns"]> {
  const args = rest[0];
  const skip = args === "skip";
  return useLiveQuery(functionPath(ref), skip ? undefined : args, skip) as QueryResult<Q["_returns"]>;
}

/**
 * The live result of a query: undefined while loading (or skipped with `"skip"`), then every
 * new result the server pushes. Args are compared by value: a new object with the same content
 * keeps the subscription. Unsubscribes on unmount. Throws the query's error to the nearest
 * error boundary (use {@link useQueryResult} to handle it in place).
 * @example
 * ```tsx
 * function Messages() {
 *   const { isAuthenticated } = useAuth();
 *   const messages = useQuery(api.messages.list, isAuthenticated ? {} : "skip");
 *   if (messages === undefined) return <p>Loading…</p>;
 *   return <ul>{messages.map((m) => <li key={m._id}>{m.body}</li>)}</ul>;
 * }
 * ```
 */
export function useQuery<Q extends QueryRef>(ref: Q, ...rest: QueryArgsOrSkip<Q>): Q["_returns"] | undefined {
  const result = useQueryResult(ref, ...rest);
  if (result.error) throw result.error;
  return result.value;
}

/**
 * The result of a query preloaded during server rendering (`preloadQuery`): its value from the
 * first render on (no loading state, so hydration matches the server's markup), then live
 * updates from a subscription to the same path and args. Throws errors like {@link useQuery}.
 * @example
 * ```tsx
 * // The server rendered the page with preloadQuery(api.messages.list, {}, { url, token }).
 * function Messages({ preloaded }: { preloaded: Preloaded<typeof api.messages.list> }) {
 *   const messages = usePreloadedQuery(preloaded);
 *   return <ul>{messages.map((m) => <li key={m._id}>{m.body}</li>)}</ul>;
 * }
 * ```
 */
export function usePreloadedQuery<Q extends QueryRef>(preloaded: Preloaded<Q>): Q["_returns"] {
  const result = useLiveQuery(preloaded.path, preloaded.args, false, { value: preloaded.value });
  if (result.error) throw result.error;
  return result.value as Q["_returns"];
}
