/**
 * `service-auth/tanstack-start`: a TanStack Start app in front of the backend. The server side
 * ({@link tanstackStartAuth}: auth server route, calls with the request's JWT) and the provider
 * for the root route (`<ServiceAuthProvider>`, the `service-auth/react` hooks below it).
 */

export type { Preloaded } from "../client/server-rendering.ts";
export { BackendCallError } from "../client/server-rendering.ts";
export type { ServiceAuthProviderProps, StartAuthClient } from "./provider.tsx";
export { createStartAuthClient, ServiceAuthProvider, useAuthClient } from "./provider.tsx";
export type { ServerRouteHandler, TanStackStartAuth, TanStackStartAuthOptions } from "./server.ts";
export { tanstackStartAuth } from "./server.ts";
