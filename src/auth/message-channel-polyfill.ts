/**
 * requirements §4.1: some HTTP runtimes lack `MessageChannel`, which HTTP handling needs. Import this
 * module first in the HTTP entry; it defines a stand-in only when the global is absent.
 */

class StubPort {
  onmessage: ((event: unknown) => void) | null = null;
  onmessageerror: ((event: unknown) => void) | null = null;
  addEventListener(): void {}
  removeEventListener(): void {}
  dispatchEvent(): boolean {
    return false;
  }
  postMessage(): void {}
  start(): void {}
  close(): void {}
}

/**
 * A channel whose two ports do nothing.
 *
 * @example
 * ```ts
 * import { StubMessageChannel } from "service-auth/auth/polyfill";
 *
 * const { port1, port2 } = new StubMessageChannel();
 * port1.postMessage("ignored"); // both ports do nothing
 * ```
 */
export class StubMessageChannel {
  readonly port1 = new StubPort();
  readonly port2 = new StubPort();
}

/**
 * Defines `globalThis.MessageChannel` when absent; returns whether it did.
 *
 * @example
 * ```ts
 * // Importing the entry installs it; first import of the HTTP entry (examples/app/http.ts):
 * import "service-auth/auth/polyfill";
 *
 * // Or explicitly, e.g. on another global object:
 * import { installMessageChannelPolyfill } from "service-auth/auth/polyfill";
 * const installed = installMessageChannelPolyfill(); // false when MessageChannel already exists
 * ```
 */
export function installMessageChannelPolyfill(target: Record<string, unknown> = globalThis as any): boolean {
  if (typeof target.MessageChannel !== "undefined") return false;
  target.MessageChannel = StubMessageChannel;
  return true;
}

installMessageChannelPolyfill();
