/**
 * `service-auth/tanstack-start`: the provider of a TanStack Start app (render it in the root
 * route; the `service-auth/react` hooks work below it). The server side (auth server route, calls
 * with the request's JWT) is `service-auth/tanstack-start/server`.
 */

export type { Preloaded } from "../client/server-rendering.ts";
export type {
  PageAuthClient as StartAuthClient,
  ServiceAuthProviderProps,
} from "../react/service-auth-provider.tsx";
export {
  createPageAuthClient as createStartAuthClient,
  ServiceAuthProvider,
  useAuthClient,
} from "../react/service-auth-provider.tsx";
