/** WebSocket close codes of the sync protocol (4000–4999 are application codes; docs/protocol.md). */
export const CloseCode = {
  /** Normal close (e.g. the client closed for good). */
  NORMAL: 1000,
  /** The server is shutting down: reconnect with backoff. */
  GOING_AWAY: 1001,
  /** A frame exceeded `maxMessageBytes` (sent by `ws` itself): reconnect, do not resend it. */
  MESSAGE_TOO_BIG: 1009,
  /** Too many malformed messages. */
  PROTOCOL_ERROR: 4000,
  /** The server does not speak the client's protocol version: retrying cannot help. */
  UNSUPPORTED_VERSION: 4001,
  /** The first message was not `connect`, or it did not come in time. */
  HANDSHAKE_REQUIRED: 4002,
  /** No message within the idle timeout (either side's view of a dead connection). */
  IDLE_TIMEOUT: 4008,
  /**
   * An administrator disconnected the session's live connections: reconnect as usual (the
   * session may still be valid; a revoked one is refused when the client authenticates).
   */
  DISCONNECTED: 4010,
  /** The client did not read its messages (or the server's output budget ran out). */
  SLOW_CONSUMER: 4009,
  /** The client's address has the most connections the server accepts from one address. */
  TOO_MANY_CONNECTIONS: 4029,
} as const;

export type CloseCode = (typeof CloseCode)[keyof typeof CloseCode];
