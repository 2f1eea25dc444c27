/**
 * `service-auth/react`: React bindings for the backend client.
 *
 * ```tsx
 * const client = new BackendClient(location.origin);
 * const authClient = createAuthClient({ plugins: [backendClient()] });
 * <BackendAuthProvider client={client} authClient={authClient}><App /></BackendAuthProvider>
 *
 * const { isAuthenticated } = useAuth();
 * const messages = useQuery(api.messages.list, isAuthenticated ? {} : "skip");
 * const send = useMutation(api.messages.send);
 * ```
 */

export type { BetterAuthClientLike } from "./better-auth-binding.ts";
export { useBackendClient } from "./context.ts";
export type { BackendAuthProviderProps, BackendProviderProps } from "./provider.tsx";
export { BackendAuthProvider, BackendProvider } from "./provider.tsx";
export type { AuthState } from "./use-auth.ts";
export { useAuth } from "./use-auth.ts";
export type { CallArgs, ReactCall } from "./use-mutation.ts";
export { useAction, useMutation } from "./use-mutation.ts";
export type { QueryArgsOrSkip, QueryResult } from "./use-query.ts";
export { usePreloadedQuery, useQuery, useQueryResult } from "./use-query.ts";
