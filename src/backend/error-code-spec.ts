/**
 * The shape of an error registry entry, shared by every module that owns codes (the platform's
 * registry, token refusals, the auth integration, the Next.js helpers). A leaf: it imports nothing.
 */

/**
 * How an error reaches a WebSocket client (docs/protocol.md):
 * - `reply`: as the `error` of the `result` / `update` answering a call or subscription;
 * - `auth_error`: also as an `auth_error` message, when the connection's credentials are refused;
 * - `refused`: as an `error` message, when a client message is refused before anything runs;
 * - `http-only`: never; the socket has its own rule (e.g. close 1009 for an oversized frame).
 *
 * @example
 * ```ts
 * const ws: WsDelivery = "reply"; // a function's own refusal reaches the call that made it
 * ```
 */
export type WsDelivery = "reply" | "auth_error" | "refused" | "http-only";

/**
 * One registered error code.
 *
 * @example
 * ```ts
 * const spec: ErrorCodeSpec = { status: 409, ws: "reply", meaning: "the username is taken" };
 * ```
 */
export interface ErrorCodeSpec {
  /** HTTP status of a response carrying this code. */
  readonly status: number;
  /** How the code reaches a WebSocket client. */
  readonly ws: WsDelivery;
  /** When a client sees this code. */
  readonly meaning: string;
}
