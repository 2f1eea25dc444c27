/**
 * A live query as a Svelte store: the latest result and error, subscribed on the backend client
 * while the store has subscribers, held back while the user is being resolved, and made anew
 * (its old results dropped) when the identity changes, as the React hooks do.
 */
import { type Readable, readable } from "svelte/store";
import type { BackendClient, BackendError } from "../client/client.ts";
import type { AuthStore } from "../react/auth-store.ts";
import { QueryStore } from "../react/query-store.ts";

/**
 * A live query's state as a store value: the latest result, the query's error, and whether the
 * first result is still loading.
 * @example
 * ```svelte
 * <script lang="ts">
 *   const { query } = getServiceAuth();
 *   const messages = query(api.messages.list, {}); // Readable<QueryResult<Message[]>>
 * </script>
 *
 * {#if $messages.error}<p role="alert">{$messages.error.message}</p>
 * {:else if $messages.isLoading}<p>Loading…</p>
 * {:else}{#each $messages.value ?? [] as m (m._id)}<p>{m.body}</p>{/each}{/if}
 * ```
 */
export interface QueryResult<T> {
  /** The latest result (the preloaded one until the subscription delivers); undefined while loading. */
  readonly value: T | undefined;
  /** The query's error (the value then stays the last good one, if any). */
  readonly error: BackendError | undefined;
  /** No result yet and no error. */
  readonly isLoading: boolean;
}

function view<T>(store: QueryStore<T>): QueryResult<T> {
  const state = store.getSnapshot();
  return { value: state.value, error: state.error, isLoading: !state.hasValue && !state.error };
}

/**
 * `client` is null where nothing may connect (the server's render): the store then only shows
 * `seed`. `seed` is shown until the first result, unless the identity changed since the store was
 * made (it was rendered for the previous user).
 * @example
 * ```ts
 * // Most apps use getServiceAuth().query(…); liveQuery is the store underneath. `client` null:
 * // a server render, where the store only shows the seed.
 * const { client } = getServiceAuth();
 * // authStore: the auth state the binding keeps (what createServiceAuth passes).
 * const messages = liveQuery(client, authStore, "messages:list", {}, { value: [] });
 * const stop = messages.subscribe(({ value, error }) => render(value, error));
 * ```
 */
export function liveQuery<T>(
  client: BackendClient | null,
  auth: AuthStore,
  path: string,
  args: Record<string, unknown>,
  seed?: { value: T },
): Readable<QueryResult<T>> {
  let identity = auth.getSnapshot().identity;
  let current = new QueryStore<T>(path, args, seed);
  return readable(view(current), (set) => {
    let stopQuery: (() => void) | undefined;
    let stopListening = current.subscribe(() => set(view(current)));
    const follow = () => {
      const state = auth.getSnapshot();
      if (state.identity !== identity) {
        identity = state.identity;
        stopQuery?.();
        stopQuery = undefined;
        stopListening();
        current = new QueryStore<T>(path, args);
        stopListening = current.subscribe(() => set(view(current)));
        set(view(current));
      }
      if (!client) return;
      if (state.isLoading && stopQuery) {
        stopQuery();
        stopQuery = undefined;
      } else if (!state.isLoading && !stopQuery) {
        stopQuery = current.connect(client);
      }
    };
    const stopAuth = auth.subscribe(follow);
    follow();
    return () => {
      stopAuth();
      stopQuery?.();
      stopListening();
    };
  });
}
