/**
 * `service-auth/client`: the framework-free client for browsers and Node.
 */
export { BackendClient, BackendError } from "./client.ts";
export type { BackendClientOptions, ConnectionState, WebSocketConstructor, WebSocketLike } from "./client.ts";
export { TokenManager, decodeJwtTimes } from "./token-manager.ts";
export type { FetchToken, TokenManagerOptions } from "./token-manager.ts";
export { backendClient } from "./auth-plugin.ts";
export { decodeClaims, isFresh, EXPIRY_LEEWAY_SECONDS } from "./jwt-claims.ts";
export {
  getRequestToken,
  fetchQuery,
  fetchMutation,
  fetchAction,
  preloadQuery,
  serializePreloaded,
  BackendCallError,
  JWT_COOKIE,
} from "./server-rendering.ts";
export type { Preloaded, RequestToken, ServerAuthOptions, FetchOptions } from "./server-rendering.ts";
export { anyApi, functionPath } from "./function-path.ts";
