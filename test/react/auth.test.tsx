/**
 * `<BackendAuthProvider>` with a real Better Auth client (`better-auth/react` + `backendClient()`)
 * against the real example app: `useAuth` states, queries waiting for the token, live updates
 * between users, sign-out, sign-in again, and a revoked session (token endpoint 401).
 */

import { createAuthClient } from "better-auth/react";
import { flushSync } from "react-dom";
import { createRoot, type Root } from "react-dom/client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { api } from "../../examples/app/app.ts";
import { backendClient } from "../../src/client/auth-plugin.ts";
import { BackendClient } from "../../src/client/client.ts";
import {
  BackendAuthProvider,
  BackendProvider,
  useAuth,
  useMutation,
  useQuery,
} from "../../src/react/index.ts";
import { CookieJar, type ExampleApp, PASSWORD, startExampleApp } from "../helpers/example-app.ts";
import { eventually } from "../helpers/wait.ts";
import { type Dom, ErrorBoundary, installDom } from "./support.tsx";

let dom: Dom;
let app: ExampleApp;
const clients: BackendClient[] = [];
const roots: Root[] = [];

beforeAll(async () => {
  dom = installDom();
  app = await startExampleApp();
});
afterEach(() => {
  for (const root of roots.splice(0)) root.unmount();
  for (const client of clients.splice(0)) client.close();
});
afterAll(async () => {
  await app?.close();
  await dom?.uninstall();
});

function newClient(): BackendClient {
  const client = new BackendClient(app.url, { WebSocket: WebSocket as any });
  clients.push(client);
  return client;
}

/**
 * A browser's view of the app for Better Auth's client: cookies kept in a jar, the page's
 * Origin on every request, and a log of each request's path and status.
 */
function browserAuthClient() {
  const jar = new CookieJar();
  const log: { path: string; status: number }[] = [];
  const customFetchImpl = async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    request.headers.set("origin", app.url);
    if (jar.cookies.size) request.headers.set("cookie", jar.header());
    const response = await fetch(request);
    jar.absorb(response);
    log.push({ path: new URL(request.url).pathname, status: response.status });
    return response;
  };
  const authClient = createAuthClient({
    baseURL: app.url,
    plugins: [backendClient()],
    fetchOptions: { customFetchImpl },
  });
  return { authClient, jar, log };
}

/** Renders the auth state, recording each distinct state. */
function Status({ states }: { states: string[] }) {
  const { isLoading, isAuthenticated } = useAuth();
  const state = isLoading ? "loading" : isAuthenticated ? "in" : "out";
  if (states.at(-1) !== state) states.push(state);
  return <i>{state}</i>;
}

const showMessages = (messages: { author: string; body: string }[] | undefined) =>
  messages === undefined ? "…" : `[${messages.map((m) => `${m.author}: ${m.body}`).join(", ")}]`;

/** The signed-in-only message list, skipped while signed out. */
function Gated() {
  const { isAuthenticated } = useAuth();
  const messages = useQuery(api.messages.list, isAuthenticated ? {} : "skip");
  return <b>{isAuthenticated ? showMessages(messages) : "skipped"}</b>;
}

/** The same list subscribed unconditionally: relies on queries waiting for authentication. */
function Eager() {
  return <u>{showMessages(useQuery(api.messages.list))}</u>;
}

type Send = ReturnType<typeof useMutation<typeof api.messages.send>>;

/** Hands its message-sending callback to `onRender`. */
function Sender({ onRender }: { onRender: (send: Send) => void }) {
  onRender(useMutation(api.messages.send));
  return null;
}

/** The signed-in user's email. */
function Me() {
  const { isAuthenticated } = useAuth();
  const me = useQuery(api.users.me, isAuthenticated ? {} : "skip");
  return <em>{me?.email ?? "…"}</em>;
}

/** The public user count. */
function Count() {
  const count = useQuery(api.users.count);
  return <s>{count === undefined ? "…" : String(count)}</s>;
}

function mount(
  client: BackendClient,
  authClient: ReturnType<typeof browserAuthClient>["authClient"],
  states: string[],
  extra?: React.ReactNode,
) {
  const el = dom.container();
  const caught: any[] = [];
  const root = createRoot(el, { onCaughtError: (error) => caught.push(error) });
  roots.push(root);
  flushSync(() =>
    root.render(
      <BackendAuthProvider client={client} authClient={authClient}>
        <Status states={states} />
        <Gated />
        <ErrorBoundary fallback={(e) => <u>{`error ${(e as any).code}`}</u>}>
          <Eager />
        </ErrorBoundary>
        {extra}
      </BackendAuthProvider>,
    ),
  );
  const text = (tag: string) => el.querySelector(tag)?.textContent;
  return { el, caught, status: () => text("i"), gated: () => text("b"), eager: () => text("u") };
}

describe("BackendAuthProvider with Better Auth", () => {
  it("goes loading → authenticated, runs auth-only queries live, and follows sign-out and sign-in", async () => {
    const { authClient } = browserAuthClient();
    const signUp = await authClient.signUp.email({
      email: "alice@example.com",
      password: PASSWORD,
      name: "alice",
    });
    expect(signUp.error).toBeNull();

    const client = newClient();
    const states: string[] = [];
    const page = mount(client, authClient, states);
    expect(page.status()).toBe("loading"); // first committed DOM
    expect(page.eager()).toBe("…");

    await eventually(() => expect(page.status()).toBe("in"));
    expect(client.isAuthenticated).toBe(true);
    await eventually(() => expect(page.eager()).toBe("[]"));
    await eventually(() => expect(page.gated()).toBe("[]"));
    // The eager query waited for the token: it never ran as anonymous and failed.
    expect(page.caught).toEqual([]);

    // Another user's message arrives live.
    const bob = await app.signUp("bob@example.com");
    const bobClient = newClient();
    bobClient.setAuth(async () => bob.token);
    await bobClient.mutation(api.messages.send, { body: "hi from bob" });
    await eventually(() => expect(page.eager()).toBe("[bob: hi from bob]"));
    await eventually(() => expect(page.gated()).toBe("[bob: hi from bob]"));

    await authClient.signOut();
    await eventually(() => expect(page.status()).toBe("out"));
    expect(client.isAuthenticated).toBe(false);
    await eventually(() => expect(page.gated()).toBe("skipped"));
    // Unskipped, the query re-runs as anonymous and its error reaches the boundary.
    await eventually(() => expect(page.eager()).toBe("error UNAUTHORIZED"));

    const signIn = await authClient.signIn.email({ email: "alice@example.com", password: PASSWORD });
    expect(signIn.error).toBeNull();
    await eventually(() => expect(page.status()).toBe("in"));
    await eventually(() => expect(page.gated()).toBe("[bob: hi from bob]"));
    expect(states).toEqual(["loading", "in", "out", "loading", "in"]);
  });

  it("sends mutations as the signed-in user", async () => {
    const { authClient } = browserAuthClient();
    await authClient.signUp.email({ email: "dora@example.com", password: PASSWORD, name: "dora" });
    let send!: Send;
    const page = mount(newClient(), authClient, [], <Sender onRender={(s) => (send = s)} />);
    await eventually(() => expect(page.status()).toBe("in"));
    const id = await send({ body: "hello from dora" });
    expect(typeof id).toBe("string");
    await eventually(() => expect(page.gated()).toContain("dora: hello from dora"));
  });

  it("re-wires the backend client when another user signs in on the same Better Auth client", async () => {
    await app.signUp("frank@example.com");
    const { authClient } = browserAuthClient();
    await authClient.signUp.email({ email: "erin@example.com", password: PASSWORD, name: "erin" });
    const states: string[] = [];
    const client = newClient();
    const page = mount(client, authClient, states, <Me />);
    const me = () => page.el.querySelector("em")?.textContent;
    await eventually(() => expect(me()).toBe("erin@example.com"));

    const signIn = await authClient.signIn.email({ email: "frank@example.com", password: PASSWORD });
    expect(signIn.error).toBeNull();
    await eventually(() => expect(me()).toBe("frank@example.com"));
    expect(page.status()).toBe("in");
    expect(states).toEqual(["loading", "in", "loading", "in"]);
    expect(await client.query(api.users.me, {})).toMatchObject({ email: "frank@example.com" });
  });

  it("reports unauthenticated when the session is revoked elsewhere and the token endpoint answers 401", async () => {
    const { authClient, jar, log } = browserAuthClient();
    await authClient.signUp.email({ email: "carol@example.com", password: PASSWORD, name: "carol" });
    const states: string[] = [];
    const count = (
      <ErrorBoundary fallback={(e) => <s>{`error ${(e as any).code}`}</s>}>
        <Count />
      </ErrorBoundary>
    );
    const page = mount(newClient(), authClient, states, count);
    const shownCount = () => page.el.querySelector("s")?.textContent;
    await eventually(() => expect(page.status()).toBe("in"));
    await eventually(() => expect(page.gated()).not.toBe("…"));
    await eventually(() => expect(Number(shownCount())).toBeGreaterThan(0));

    // Signed out from another tab: only the server knows (this Better Auth client still has the session).
    const elsewhere = app.browser();
    for (const [name, value] of jar.cookies) elsewhere.jar.cookies.set(name, value);
    expect((await elsewhere.post("/api/auth/sign-out")).status).toBe(200);
    expect(authClient.$store.atoms.session.get().data).not.toBeNull();

    await eventually(() => expect(page.status()).toBe("out"));
    expect(log).toContainEqual({ path: "/api/auth/backend/token", status: 401 });
    expect(states).toEqual(["loading", "in", "out"]);
    await eventually(() => expect(page.gated()).toBe("skipped"));
    // Better Auth is told to re-read the session, and agrees.
    await eventually(() => expect(authClient.$store.atoms.session.get().data).toBeNull());
    // The client stopped every live query at the sign-out; the public one is subscribed again
    // (anonymously) instead of failing, and stays live. While it is being subscribed again it shows
    // "…", so wait until it shows the server's current count before counting on it.
    const before = (await app.call("query", "users:count")).body.value as number;
    await eventually(() => expect(shownCount()).toBe(String(before)));
    await app.signUp("carol2@example.com");
    await eventually(() => expect(shownCount()).toBe(String(before + 1)));
    expect(page.caught.filter((e) => e.code !== "UNAUTHORIZED")).toEqual([]);
  });

  it("goes loading → unauthenticated without a session, running public queries anonymously", async () => {
    const { authClient, log } = browserAuthClient();
    const el = dom.container();
    const root = createRoot(el);
    roots.push(root);
    const states: string[] = [];
    flushSync(() =>
      root.render(
        <BackendAuthProvider client={newClient()} authClient={authClient}>
          <Status states={states} />
          <Count />
        </BackendAuthProvider>,
      ),
    );
    expect(el.textContent).toBe("loading…");
    await eventually(() => expect(el.querySelector("i")?.textContent).toBe("out"));
    await eventually(() => expect(Number(el.querySelector("s")?.textContent)).toBeGreaterThan(0));
    expect(states).toEqual(["loading", "out"]);
    expect(log.filter((r) => r.path === "/api/auth/backend/token")).toEqual([]); // no session, no token call
  });

  it("useAuth needs BackendAuthProvider", () => {
    const el = dom.container();
    const caught: unknown[] = [];
    const root = createRoot(el, { onCaughtError: (error) => caught.push(error) });
    roots.push(root);
    flushSync(() =>
      root.render(
        <BackendProvider client={newClient()}>
          <ErrorBoundary fallback={(e) => <p>{e.message}</p>}>
            <Status states={[]} />
          </ErrorBoundary>
        </BackendProvider>,
      ),
    );
    expect(el.textContent).toBe("useAuth() needs <BackendAuthProvider>");
    expect(caught).toHaveLength(1);
  });
});
