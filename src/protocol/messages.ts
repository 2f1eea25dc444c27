/**
 * The sync protocol's messages (docs/protocol.md), typed in both directions, and the server's reader
 * of untrusted client frames ({@link parseClientMessage}), so a new client message is typed and
 * parsed in this one file. Shared by the server (`src/backend/sync`) and the clients, so this
 * module imports nothing and uses no Node API: browser bundles use it as is.
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

// ------------------------------------------------------------------------------ reading client messages

/** Why a message could not be accepted; `id` is echoed when the message had a usable one. */
export class ProtocolError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly id?: RequestId,
  ) {
    super(message);
  }
}

const isId = (x: unknown): x is RequestId =>
  (typeof x === "string" && x.length > 0 && x.length <= 64) ||
  (typeof x === "number" && Number.isSafeInteger(x));

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

type ClientMessageType = ClientMessage["type"];

/**
 * Every client message type. A type added to `ClientMessage` fails to compile here until listed,
 * and then in the `never` check of {@link parseClientMessage} until parsed.
 */
const CLIENT_MESSAGE_TYPES: Readonly<Record<ClientMessageType, true>> = {
  connect: true,
  authenticate: true,
  ping: true,
  subscribe: true,
  unsubscribe: true,
  query: true,
  mutation: true,
  action: true,
};

const isClientMessageType = (type: string): type is ClientMessageType =>
  Object.hasOwn(CLIENT_MESSAGE_TYPES, type);

/** Parses one text frame; throws {@link ProtocolError} for anything malformed. */
export function parseClientMessage(text: string): ClientMessage {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ProtocolError("BAD_MESSAGE", "Message is not valid JSON");
  }
  if (!isPlainObject(raw) || typeof raw.type !== "string") {
    throw new ProtocolError("BAD_MESSAGE", 'Message must be a JSON object with a "type"');
  }
  const id = isId(raw.id) ? raw.id : undefined;
  const type = raw.type;
  if (!isClientMessageType(type)) {
    throw new ProtocolError("UNKNOWN_MESSAGE_TYPE", `Unknown message type "${type.slice(0, 40)}"`, id);
  }
  switch (type) {
    case "connect":
      if (typeof raw.v !== "number") throw new ProtocolError("BAD_MESSAGE", 'connect needs a numeric "v"');
      if (raw.token !== undefined && raw.token !== null && typeof raw.token !== "string") {
        throw new ProtocolError("BAD_MESSAGE", "token must be a string or null");
      }
      return { type: "connect", v: raw.v, token: (raw.token as string | null | undefined) ?? null };
    case "authenticate":
      if (raw.token !== null && typeof raw.token !== "string") {
        throw new ProtocolError("BAD_MESSAGE", "authenticate needs a token (string or null)");
      }
      return { type: "authenticate", token: raw.token as string | null };
    case "ping":
      return { type: "ping" };
    case "unsubscribe":
      if (id === undefined) throw new ProtocolError("BAD_MESSAGE", "unsubscribe needs an id");
      return { type: "unsubscribe", id };
    case "subscribe":
    case "query":
    case "mutation":
    case "action": {
      if (id === undefined) {
        throw new ProtocolError("BAD_MESSAGE", `${type} needs an id (string of 1-64 chars or integer)`);
      }
      if (typeof raw.path !== "string" || raw.path.length === 0) {
        throw new ProtocolError("BAD_MESSAGE", `${type} needs a "path"`, id);
      }
      const args = raw.args ?? {};
      if (!isPlainObject(args)) throw new ProtocolError("INVALID_ARGUMENTS", "args must be an object", id);
      return { type, id, path: raw.path, args };
    }
    default: {
      // Exhaustive: a type listed in CLIENT_MESSAGE_TYPES but not parsed above fails to compile.
      const unparsed: never = type;
      throw new ProtocolError("UNKNOWN_MESSAGE_TYPE", `Unknown message type "${String(unparsed)}"`, id);
    }
  }
}

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
