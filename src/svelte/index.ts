/**
 * `service-auth/svelte`: live queries and the auth state as Svelte stores, on the framework-free
 * client (`service-auth/client`) and a Better Auth client. Server `load` helpers for SvelteKit are
 * in `service-auth/sveltekit`.
 *
 * ```svelte
 * <!-- +layout.svelte -->
 * <script>setServiceAuth({ url: data.backendUrl });</script>
 * <!-- +page.svelte -->
 * <script>
 *   const { auth, preloaded } = getServiceAuth();
 *   const messages = preloaded(data.messages); // then {#each $messages.value as m}
 * </script>
 * ```
 */

export type { AuthSnapshot } from "../react/auth-store.ts";
export type { QueryResult } from "./live-query.ts";
export { liveQuery } from "./live-query.ts";
export type { ServiceAuth, ServiceAuthOptions, SvelteAuthClient } from "./service-auth.ts";
export { createServiceAuth, createSvelteAuthClient, getServiceAuth, setServiceAuth } from "./service-auth.ts";
