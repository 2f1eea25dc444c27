import type { ClientMessage } from "../protocol/messages.ts";

/** How the client's parts send: through the current socket, when it is open. */
export interface Outbox {
  /** Connected and authentication settled: subscriptions and requests may be sent. */
  readonly ready: boolean;
  /** Sends on the current socket, ready or not; false when there is no open socket. */
  send(message: ClientMessage): boolean;
  /** Sends a message serialized earlier (a request keeps its text until it is sent). */
  sendText(text: string): boolean;
}
