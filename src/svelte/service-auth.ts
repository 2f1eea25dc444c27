/**
 * One page load's backend client (WebSocket to the backend) and Better Auth client, wired together
 * as `<BackendAuthProvider>` wires them in React, exposed as Svelte stores: the auth state and
 * live queries. Made once per page load in the root layout ({@link setServiceAuth}) and read by
 * components ({@link getServiceAuth}).
 *
 * In the server's render nothing connects: query stores show the data preloaded by `load`, and
 * the auth state stays loading until the browser has resolved the session.
 */
import { createAuthClient } from "better-auth/client";
import { getContext, setContext } from "svelte";
import { type Readable, readable } from "svelte/store";
import type { FunctionReference } from "../backend/functions/references.ts";
import { backendClient } from "../client/auth-plugin.ts";
import { BackendClient, type BackendClientOptions } from "../client/client.ts";
import { functionPath } from "../client/function-path.ts";
import type { Preloaded } from "../client/server-rendering.ts";
import { type AuthSnapshot, AuthStore } from "../react/auth-store.ts";
import { BetterAuthBinding, type BetterAuthClientLike } from "../react/better-auth-binding.ts";
import { liveQuery, type QueryResult } from "./live-query.ts";

type QueryRef = FunctionReference<"query", "public">;
type MutationRef = FunctionReference<"mutation", "public">;
type ActionRef = FunctionReference<"action", "public">;

/**
 * The Better Auth client made when the app passes none (on the page's origin, `/api/auth`).
 * @example
 * ```ts
 * // src/lib/auth-client.ts
 * import { createSvelteAuthClient } from "service-auth/svelte";
 *
 * export const authClient = createSvelteAuthClient();
 * await authClient.signIn.email({ email, password });
 * ```
 */
export function createSvelteAuthClient() {
  return createAuthClient({ plugins: [backendClient()] });
}

/**
 * The type of the default Better Auth client ({@link createSvelteAuthClient}).
 * @example
 * ```ts
 * import { getServiceAuth, type SvelteAuthClient } from "service-auth/svelte";
 *
 * const authClient: SvelteAuthClient = getServiceAuth().authClient;
 * await authClient.signOut();
 * ```
 */
export type SvelteAuthClient = ReturnType<typeof createSvelteAuthClient>;

/**
 * Options of {@link setServiceAuth} and {@link createServiceAuth}: the backend URL the browser
 * reaches, and optionally a Better Auth client, backend client options and whether to connect.
 * @example
 * ```ts
 * const options: ServiceAuthOptions = {
 *   url: data.backendUrl,
 *   clientOptions: { onConnectionChange: (state) => console.log(state) },
 * };
 * setServiceAuth(options);
 * ```
 */
export interface ServiceAuthOptions<C extends BetterAuthClientLike = SvelteAuthClient> {
  /** The backend's URL as the browser reaches it (its WebSocket endpoint is `/api/sync` there). */
  url: string;
  /** A Better Auth client with the `backendClient()` plugin; default {@link createSvelteAuthClient}'s. */
  authClient?: C;
  /** Options of the backend client (reconnect delays, connection state callback). */
  clientOptions?: BackendClientOptions;
  /** Whether to connect (default: in a browser only, so server renders never open sockets). */
  connect?: boolean;
}

/**
 * One page load's clients as Svelte stores: the auth state, live and preloaded queries, mutations,
 * actions, and the Better Auth client.
 * @example
 * ```svelte
 * <script lang="ts">
 *   import { getServiceAuth } from "service-auth/svelte";
 *   const { auth, query, mutation }: ServiceAuth = getServiceAuth();
 *   const messages = query(api.messages.list, {});
 *   const send = mutation(api.messages.send);
 * </script>
 *
 * {#if $auth.isAuthenticated}
 *   {#each $messages.value ?? [] as m (m._id)}<p>{m.body}</p>{/each}
 *   <button onclick={() => send({ body: "hello" })}>Send</button>
 * {/if}
 * ```
 */
export interface ServiceAuth<C extends BetterAuthClientLike = SvelteAuthClient> {
  /** The backend client; null where nothing connects (the server's render). */
  readonly client: BackendClient | null;
  readonly authClient: C;
  /** `isLoading` while the session and its token are resolved, then `isAuthenticated`. */
  readonly auth: Readable<AuthSnapshot>;
  /** A live query: `$messages.value`, `.error`, `.isLoading`. */
  query<Q extends QueryRef>(ref: Q, args?: Q["_args"]): Readable<QueryResult<Q["_returns"]>>;
  /** A query preloaded by a server `load`: its value from the first render, then live. */
  preloaded<Q extends QueryRef>(preloaded: Preloaded<Q>): Readable<QueryResult<Q["_returns"]>>;
  mutation<M extends MutationRef>(ref: M): (args: M["_args"]) => Promise<M["_returns"]>;
  action<A extends ActionRef>(ref: A): (args: A["_args"]) => Promise<A["_returns"]>;
  /** Stops following the session and closes the connection. */
  close(): void;
}

/**
 * The backend and Better Auth clients for one page load; see {@link setServiceAuth}.
 * @example
 * ```ts
 * // Outside a component tree (tests, a plain script): no Svelte context needed.
 * const serviceAuth = createServiceAuth({ url: "https://api.example.com" });
 * const stop = serviceAuth.auth.subscribe(({ isAuthenticated }) => render(isAuthenticated));
 * // …
 * serviceAuth.close();
 * ```
 */
export function createServiceAuth<C extends BetterAuthClientLike = SvelteAuthClient>(
  options: ServiceAuthOptions<C>,
): ServiceAuth<C> {
  const connect = options.connect ?? typeof window !== "undefined";
  const authClient = (options.authClient ?? createSvelteAuthClient()) as C;
  const store = new AuthStore({ isLoading: true, isAuthenticated: false, identity: 0 }, true);
  const client = connect ? new BackendClient(options.url, options.clientOptions) : null;
  const stopBinding = client ? new BetterAuthBinding(client, authClient, store).start() : () => {};
  const notConnected = () => Promise.reject(new Error("service-auth/svelte: not connected (server render)"));
  return {
    client,
    authClient,
    auth: readable(store.getSnapshot(), (set) => {
      set(store.getSnapshot());
      return store.subscribe(() => set(store.getSnapshot()));
    }),
    query: (ref, args) =>
      liveQuery(client, store, functionPath(ref), (args ?? {}) as Record<string, unknown>),
    preloaded: (preloaded) =>
      liveQuery(client, store, preloaded.path, (preloaded.args ?? {}) as Record<string, unknown>, {
        value: preloaded.value,
      }),
    mutation: (ref) => (args) => (client ? client.mutation(ref, args) : notConnected()),
    action: (ref) => (args) => (client ? client.action(ref, args) : notConnected()),
    close() {
      stopBinding();
      client?.close();
    },
  };
}

const CONTEXT = Symbol("service-auth");

/**
 * Makes the clients for this page load and provides them to child components (call in the root layout's script).
 * @example
 * ```svelte
 * <!-- src/routes/+layout.svelte -->
 * <script lang="ts">
 *   import { setServiceAuth } from "service-auth/svelte";
 *   let { data, children } = $props();
 *   setServiceAuth({ url: data.backendUrl });
 * </script>
 *
 * {@render children()}
 * ```
 */
export function setServiceAuth<C extends BetterAuthClientLike = SvelteAuthClient>(
  options: ServiceAuthOptions<C>,
): ServiceAuth<C> {
  return setContext(CONTEXT, createServiceAuth(options));
}

/**
 * The clients provided by {@link setServiceAuth} in an ancestor component.
 * @example
 * ```svelte
 * <script lang="ts">
 *   import { getServiceAuth } from "service-auth/svelte";
 *   let { messages } = $props(); // preloaded by +page.server.ts
 *   const { preloaded, mutation } = getServiceAuth();
 *   const list = preloaded(messages);
 *   const send = mutation(api.messages.send);
 * </script>
 *
 * {#each $list.value ?? [] as m (m._id)}<p>{m.body}</p>{/each}
 * ```
 */
export function getServiceAuth<C extends BetterAuthClientLike = SvelteAuthClient>(): ServiceAuth<C> {
  const auth = getContext<ServiceAuth<C> | undefined>(CONTEXT);
  if (!auth) throw new Error("getServiceAuth(): call setServiceAuth() in the root layout first");
  return auth;
}
