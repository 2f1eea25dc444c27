/**
 * `service-auth/client`: the framework-free client for browsers, Node and React Native
 * (no DOM APIs; `NativeAuth` signs in without cookies).
 */

export { backendClient } from "./auth-plugin.ts";
export type { AuthProxy, AuthProxyOptions } from "./auth-proxy.ts";
export { authProxy, isAuthRequest } from "./auth-proxy.ts";
export type { BackendClientOptions, ConnectionState, WebSocketConstructor, WebSocketLike } from "./client.ts";
export { BackendClient, BackendError } from "./client.ts";
export { anyApi, functionPath } from "./function-path.ts";
export { decodeClaims, EXPIRY_LEEWAY_SECONDS, isFresh } from "./jwt-claims.ts";
export type { NativeAuthOptions } from "./native-auth.ts";
export { NativeAuth, NativeAuthError } from "./native-auth.ts";
export type { FetchOptions, Preloaded, RequestToken, ServerAuthOptions } from "./server-rendering.ts";
export {
  BackendCallError,
  fetchAction,
  fetchMutation,
  fetchQuery,
  getRequestToken,
  JWT_COOKIE,
  preloadQuery,
  serializePreloaded,
} from "./server-rendering.ts";
export type { FetchToken, TokenManagerOptions } from "./token-manager.ts";
export { decodeJwtTimes, TokenManager } from "./token-manager.ts";
export type { TokenStorage } from "./token-storage.ts";
export { memoryStorage } from "./token-storage.ts";
