/**
 * The server's reader of the sync protocol (docs/protocol.md): turns untrusted text into a typed
 * client message or a typed error. The message types, close codes and version are shared with the
 * clients in `src/protocol/`.
 */
import {
  type ClientMessage,
  PROTOCOL_VERSION,
  type RequestId,
  type WireError,
} from "../../protocol/messages.ts";

/** Protocol versions this server speaks; the client names its version in `connect`. */
export const PROTOCOL_VERSIONS: readonly number[] = [PROTOCOL_VERSION];

// The error shape is imported from here by `wire-error.ts`.
export type { RequestId, WireError };

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
