/**
 * Test support for the React bindings: a DOM to render into, an error
 * boundary and a WebSocket that records what the client sends.
 *
 * Why not `// @vitest-environment happy-dom` (or jsdom): these tests run the real server in the
 * same process, and a DOM environment replaces Node's globals for everyone. Under happy-dom the
 * server's `Response` drops `Set-Cookie` (sign-up sets no cookie) and `fetch` applies browser CORS
 * and forbids `Cookie`/`Origin` headers; under jsdom, esbuild refuses to load (`Uint8Array`
 * identity). So the tests stay in Node and give React a happy-dom window of its own: only the
 * DOM globals (`window`, `document`, …) are set, Node's networking is untouched.
 */

import { Window } from "happy-dom";
import { Component, type ReactNode } from "react";
import WebSocket from "ws";

export interface Dom {
  window: Window;
  document: Window["document"];
  /** A fresh element to mount a React root into. */
  container(): HTMLElement;
  uninstall(): Promise<void>;
}

/** DOM globals React and the Better Auth client read. */
const GLOBALS = [
  "window",
  "document",
  "navigator",
  "localStorage",
  "sessionStorage",
  "HTMLElement",
  "HTMLIFrameElement",
  "Node",
  "Event",
];

export function installDom(url = "http://127.0.0.1/"): Dom {
  const window = new Window({ url });
  const g = globalThis as Record<string, unknown>;
  const saved = new Map<string, PropertyDescriptor | undefined>();
  for (const name of GLOBALS) {
    saved.set(name, Object.getOwnPropertyDescriptor(g, name));
    Object.defineProperty(g, name, {
      value: name === "window" ? window : (window as unknown as Record<string, unknown>)[name],
      configurable: true,
      writable: true,
    });
  }
  return {
    window,
    document: window.document,
    container() {
      const el = window.document.createElement("div");
      window.document.body.appendChild(el);
      return el as unknown as HTMLElement;
    },
    async uninstall() {
      for (const [name, descriptor] of saved) {
        if (descriptor) Object.defineProperty(g, name, descriptor);
        else delete g[name];
      }
      await window.happyDOM.close();
    },
  };
}

/** Renders `fallback(error)` instead of children that threw. */
export class ErrorBoundary extends Component<
  { fallback: (error: Error) => ReactNode; children?: ReactNode },
  { error: Error | null }
> {
  state = { error: null as Error | null };
  static getDerivedStateFromError(error: Error) {
    return { error };
  }
  render() {
    return this.state.error ? this.props.fallback(this.state.error) : this.props.children;
  }
}

/** Every frame the test's clients sent, parsed, in order. */
export const sentFrames: any[] = [];

/** `ws`'s WebSocket, recording outgoing frames (to see `subscribe`/`unsubscribe` on the wire). */
export class RecordingWebSocket extends WebSocket {
  override send(data: any, ...rest: any[]): void {
    try {
      sentFrames.push(JSON.parse(String(data)));
    } catch {
      // not JSON: not ours to record
    }
    (super.send as (...args: any[]) => void)(data, ...rest);
  }
}
