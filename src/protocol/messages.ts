/**
 * The sync protocol's messages (docs/protocol.md), typed in both directions. Shared by the server
 * (`src/backend/sync`) and the clients, so this module imports nothing: browser bundles use it as is.
 */

/** The protocol version this code speaks; sent in `connect` and echoed in `connected`. */
export const PROTOCOL_VERSION = 1;

/** A subscription or request id, chosen by the client: an integer or a string of 1–64 characters. */
export type RequestId = string | number;

/** A typed error as it travels on the wire. */
export interface WireError {
  code: string;
  message: string;
  data?: unknown;
}

/** The one-shot calls; each gets exactly one `result`. */
export type CallKind = "query" | "mutation" | "action";

// ------------------------------------------------------------------------------ client → server

export interface ConnectMessage {
  type: "connect";
  v: number;
  token?: string | null;
}
export interface AuthenticateMessage {
  type: "authenticate";
  /** null continues anonymously. */
  token: string | null;
}
export interface SubscribeMessage {
  type: "subscribe";
  id: RequestId;
  path: string;
  args: Record<string, unknown>;
}
export interface UnsubscribeMessage {
  type: "unsubscribe";
  id: RequestId;
}
export interface CallMessage {
  type: CallKind;
  id: RequestId;
  path: string;
  args: Record<string, unknown>;
}
export interface PingMessage {
  type: "ping";
}

export type ClientMessage =
  | ConnectMessage
  | AuthenticateMessage
  | SubscribeMessage
  | UnsubscribeMessage
  | CallMessage
  | PingMessage;

// ------------------------------------------------------------------------------ server → client

/** The limits a server announces in `connected`. */
export interface ConnectionLimits {
  /** The server closes a connection silent this long (4008): ping every ~third of it. */
  idleTimeoutMs: number;
  maxMessageBytes: number;
  maxSubscriptions: number;
  maxInFlight: number;
}

/** A function's outcome: its value, or its error. */
export type Outcome = { value: unknown; error?: never } | { error: WireError; value?: never };

export type ConnectedMessage = { type: "connected"; v: number; authenticated: boolean } & ConnectionLimits;
export interface AuthenticatedMessage {
  type: "authenticated";
  authenticated: boolean;
}
/** The credentials are no longer accepted; every subscription of the connection was stopped. */
export type AuthErrorMessage = { type: "auth_error" } & WireError;
/** A subscription's current result (the first one is the initial result). */
export type UpdateMessage = { type: "update"; id: RequestId } & Outcome;
/** The answer to a `query`, `mutation` or `action`. */
export type ResultMessage = { type: "result"; id: RequestId } & Outcome;
/** A refused message; with `id`, the subscription was not created / the request not run. */
export type ErrorMessage = { type: "error"; id?: RequestId } & WireError;
export interface PongMessage {
  type: "pong";
}

export type ServerMessage =
  | ConnectedMessage
  | AuthenticatedMessage
  | AuthErrorMessage
  | UpdateMessage
  | ResultMessage
  | ErrorMessage
  | PongMessage;
