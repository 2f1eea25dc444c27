/**
 * `<ServiceAuthProvider>` (the Next.js and TanStack Start provider) opens one socket per page,
 * however often React renders it before committing. React throws away a render that suspends
 * before its first commit and runs the state initializers again on the retry; a client that
 * connected in its constructor left one open socket behind per discarded render (a CI run of the
 * Next.js example saw Chromium refuse new sockets: "Insufficient resources", 558 times).
 */
import { createAuthClient } from "better-auth/react";
import { createRoot, type Root } from "react-dom/client";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import WebSocket from "ws";
import { api } from "../../examples/app/app.ts";
import { backendClient } from "../../src/client/auth-plugin.ts";
import type { BackendClient } from "../../src/client/client.ts";
import { useBackendClient, useQuery } from "../../src/react/index.ts";
import { ServiceAuthProvider } from "../../src/react/service-auth-provider.tsx";
import { type ExampleApp, startExampleApp } from "../helpers/example-app.ts";
import { eventually } from "../helpers/wait.ts";
import { type Dom, installDom } from "./support.tsx";

let dom: Dom;
let app: ExampleApp;
const roots: Root[] = [];
const clients = new Set<BackendClient>();
/** Every socket any client opened in this file. */
const opened: WebSocket[] = [];

/** The page's `WebSocket` (the provider uses the global one in a browser), counting sockets. */
class CountingWebSocket extends WebSocket {
  constructor(url: string) {
    super(url);
    opened.push(this);
  }
}

/** Node's own WebSocket (Node 22 has one), put back after the file. */
const nodeWebSocket = Object.getOwnPropertyDescriptor(globalThis, "WebSocket");

beforeAll(async () => {
  dom = installDom();
  Object.defineProperty(globalThis, "WebSocket", {
    value: CountingWebSocket,
    configurable: true,
    writable: true,
  });
  app = await startExampleApp();
});
afterEach(() => {
  for (const root of roots.splice(0)) root.unmount();
  for (const client of clients) client.close();
  clients.clear();
  // Sockets of clients the test cannot reach (the leak this file is about) are ended here.
  for (const ws of opened.splice(0)) ws.terminate();
});
afterAll(async () => {
  if (nodeWebSocket) Object.defineProperty(globalThis, "WebSocket", nodeWebSocket);
  else delete (globalThis as { WebSocket?: unknown }).WebSocket;
  await app?.close();
  await dom?.uninstall();
});

const anonymousAuthClient = () =>
  createAuthClient({
    baseURL: app.url,
    plugins: [backendClient()],
    fetchOptions: {
      customFetchImpl: (input: RequestInfo | URL, init?: RequestInit) => {
        const request = new Request(input, init);
        request.headers.set("origin", app.url);
        return fetch(request);
      },
    },
  });

/** Suspends while `left.count` > 0, one count per render (each on a promise settled at once), like a lazy chunk. */
function Suspends({ left }: { left: { count: number } }) {
  if (left.count > 0) {
    left.count--;
    throw Promise.resolve();
  }
  return null;
}

/** The public user count, live: what makes the client connect. */
function Count() {
  clients.add(useBackendClient());
  const count = useQuery(api.users.count);
  return <s>{count === undefined ? "…" : String(count)}</s>;
}

it("renders that suspend before the first commit open no socket: one page, one socket", async () => {
  const left = { count: 3 };
  const el = dom.container();
  const root = createRoot(el);
  roots.push(root);
  // No Suspense boundary between the provider and the suspending child: every retry renders the
  // provider anew, as when a page's root layout waits for a client chunk.
  root.render(
    <ServiceAuthProvider url={app.url} authClient={anonymousAuthClient()}>
      <Suspends left={left} />
      <Count />
    </ServiceAuthProvider>,
  );
  await eventually(() => expect(el.querySelector("s")?.textContent).toMatch(/^\d+$/));
  expect(opened).toHaveLength(1);
});
