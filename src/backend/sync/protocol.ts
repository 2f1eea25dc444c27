/**
 * The sync protocol's wire format (version 1, see docs/protocol.md): message shapes, close codes
 * and the parser that turns untrusted text into a typed client message or a typed error.
 */

/** Protocol versions this server speaks; the client names its version in `connect`. */
export const PROTOCOL_VERSIONS = [1] as const;

/** WebSocket close codes the server uses (4000–4999 are application codes). */
export const CloseCode = {
  NORMAL: 1000,
  GOING_AWAY: 1001,
  /** Sent by `ws` itself when a frame exceeds `maxMessageBytes`. */
  MESSAGE_TOO_BIG: 1009,
  PROTOCOL_ERROR: 4000,
  UNSUPPORTED_VERSION: 4001,
  HANDSHAKE_REQUIRED: 4002,
  IDLE_TIMEOUT: 4008,
  SLOW_CONSUMER: 4009,
} as const;

export type RequestId = string | number;

export type ClientMessage =
  | { type: "connect"; v: number; token?: string | null }
  | { type: "authenticate"; token: string | null }
  | { type: "subscribe"; id: RequestId; path: string; args: Record<string, unknown> }
  | { type: "unsubscribe"; id: RequestId }
  | { type: "query" | "mutation" | "action"; id: RequestId; path: string; args: Record<string, unknown> }
  | { type: "ping" };

/** A typed error as it travels on the wire. */
export interface WireError {
  code: string;
  message: string;
  data?: unknown;
}

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
  switch (raw.type) {
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
        throw new ProtocolError("BAD_MESSAGE", `${raw.type} needs an id (string of 1-64 chars or integer)`);
      }
      if (typeof raw.path !== "string" || raw.path.length === 0) {
        throw new ProtocolError("BAD_MESSAGE", `${raw.type} needs a "path"`, id);
      }
      const args = raw.args ?? {};
      if (!isPlainObject(args)) throw new ProtocolError("INVALID_ARGUMENTS", "args must be an object", id);
      return { type: raw.type, id, path: raw.path, args };
    }
    default:
      throw new ProtocolError("UNKNOWN_MESSAGE_TYPE", `Unknown message type "${raw.type.slice(0, 40)}"`, id);
  }
}

/** JSON with object keys sorted, so equal args share one execution whatever their key order. */
export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(",")}]`;
  const keys = Object.keys(value).sort();
  const parts: string[] = [];
  for (const k of keys) {
    const v = (value as Record<string, unknown>)[k];
    if (v !== undefined) parts.push(`${JSON.stringify(k)}:${stableStringify(v)}`);
  }
  return `{${parts.join(",")}}`;
}
