/**
 * React bindings against a real server (no auth): live queries, args changes, unmounting,
 * mutations, actions, errors and preloaded (server-rendered) queries.
 */
import { useEffect, useState } from "react";
import { flushSync } from "react-dom";
import { createRoot, hydrateRoot, type Root } from "react-dom/client";
import { renderToString } from "react-dom/server";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, expectTypeOf, it } from "vitest";
import { BackendClient } from "../../src/client/client.ts";
import { type Preloaded, preloadQuery } from "../../src/client/server-rendering.ts";
import {
  BackendProvider,
  useAction,
  useMutation,
  usePreloadedQuery,
  useQuery,
  useQueryResult,
} from "../../src/react/index.ts";
import { api, type NotesApp, startNotesApp } from "./fixtures/notes-app.ts";
import { type Dom, ErrorBoundary, eventually, installDom, RecordingWebSocket, sentFrames } from "./support.tsx";

let dom: Dom;
let app: NotesApp;
const clients: BackendClient[] = [];
const roots: Root[] = [];

beforeAll(async () => {
  dom = installDom();
  app = await startNotesApp();
});
beforeEach(() => {
  sentFrames.length = 0; // subscription ids are per client: look at this test's frames only
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
  const client = new BackendClient(app.url, { WebSocket: RecordingWebSocket as any });
  clients.push(client);
  return client;
}

/** Mounts `node` under a provider for `client`, committing the first render synchronously. */
function mount(
  client: BackendClient,
  node: React.ReactNode,
  options?: Parameters<typeof createRoot>[1],
): { root: Root; el: HTMLElement } {
  const el = dom.container();
  const root = createRoot(el, options);
  roots.push(root);
  flushSync(() => root.render(<BackendProvider client={client}>{node}</BackendProvider>));
  return { root, el };
}

const show = (notes: string[] | undefined) => (notes === undefined ? "loading" : `[${notes.join(",")}]`);

/** `subscribe` frames the test's clients sent for a channel. */
const subscribes = (channel: string) =>
  sentFrames.filter((f) => f.type === "subscribe" && f.path === "notes:byChannel" && f.args.channel === channel);

describe("useQuery", () => {
  it("renders undefined while loading, then the result, then live updates from another client's mutation", async () => {
    const renders: (string[] | undefined)[] = [];
    function Notes() {
      const notes = useQuery(api.notes.byChannel, { channel: "live" });
      expectTypeOf(notes).toEqualTypeOf<string[] | undefined>();
      renders.push(notes);
      return <p>{show(notes)}</p>;
    }
    const { el } = mount(newClient(), <Notes />);
    expect(el.textContent).toBe("loading");
    await eventually(() => expect(el.textContent).toBe("[]"));

    const other = newClient();
    await other.mutation(api.notes.add, { channel: "live", body: "hello" });
    await eventually(() => expect(el.textContent).toBe("[hello]"));
    await other.mutation(api.notes.add, { channel: "live", body: "again" });
    await eventually(() => expect(el.textContent).toBe("[hello,again]"));
    expect(renders[0]).toBeUndefined();
    expect(renders.filter((r) => r === undefined)).toHaveLength(1); // no loading state once loaded
  });

  it("keeps the subscription for equal args and re-subscribes when the args' value changes", async () => {
    const other = newClient();
    await other.mutation(api.notes.add, { channel: "args-b", body: "in b" });
    function Notes({ channel }: { channel: string; tick: number }) {
      return <p>{show(useQuery(api.notes.byChannel, { channel }))}</p>; // a new args object every render
    }
    const client = newClient();
    const { root, el } = mount(client, <Notes channel="args-a" tick={0} />);
    await eventually(() => expect(el.textContent).toBe("[]"));
    const firstId = subscribes("args-a")[0]?.id;
    expect(subscribes("args-a")).toHaveLength(1);

    for (let tick = 1; tick <= 3; tick++) {
      flushSync(() => root.render(<BackendProvider client={client}><Notes channel="args-a" tick={tick} /></BackendProvider>));
    }
    await other.mutation(api.notes.add, { channel: "args-a", body: "still live" });
    await eventually(() => expect(el.textContent).toBe("[still live]"));
    expect(subscribes("args-a")).toHaveLength(1);
    expect(sentFrames.some((f) => f.type === "unsubscribe" && f.id === firstId)).toBe(false);

    flushSync(() => root.render(<BackendProvider client={client}><Notes channel="args-b" tick={4} /></BackendProvider>));
    await eventually(() => expect(el.textContent).toBe("[in b]"));
    expect(subscribes("args-b")).toHaveLength(1);
    expect(sentFrames.some((f) => f.type === "unsubscribe" && f.id === firstId)).toBe(true);
    // The old args' updates no longer reach the component.
    await other.mutation(api.notes.add, { channel: "args-a", body: "unseen" });
    await other.mutation(api.notes.add, { channel: "args-b", body: "seen" });
    await eventually(() => expect(el.textContent).toBe("[in b,seen]"));
  });

  it("unsubscribes on unmount", async () => {
    await eventually(() => expect(app.subscriptionCount()).toBe(0)); // earlier tests' clients are gone
    function Notes() {
      return <p>{show(useQuery(api.notes.byChannel, { channel: "unmount" }))}</p>;
    }
    const { root, el } = mount(newClient(), <Notes />);
    await eventually(() => expect(el.textContent).toBe("[]"));
    expect(app.subscriptionCount()).toBe(1);
    const id = subscribes("unmount")[0].id;
    root.unmount();
    await eventually(() => expect(app.subscriptionCount()).toBe(0));
    expect(sentFrames).toContainEqual({ type: "unsubscribe", id });
  });

  it('does not subscribe with "skip", and subscribes once args are given', async () => {
    function Notes({ on }: { on: boolean }) {
      const notes = useQuery(api.notes.byChannel, on ? { channel: "skipped" } : "skip");
      return <p>{show(notes)}</p>;
    }
    const client = newClient();
    const { root, el } = mount(client, <Notes on={false} />);
    // A one-shot query round-trips through the same connection, so a subscribe would have been sent.
    await client.query(api.notes.byChannel, { channel: "other" });
    expect(el.textContent).toBe("loading");
    expect(subscribes("skipped")).toHaveLength(0);
    flushSync(() => root.render(<BackendProvider client={client}><Notes on /></BackendProvider>));
    await eventually(() => expect(el.textContent).toBe("[]"));
    expect(subscribes("skipped")).toHaveLength(1);
  });

  it("throws a failing query's error to the nearest error boundary; useQueryResult returns it", async () => {
    function Closed() {
      return <p>{show(useQuery(api.notes.byChannel, { channel: "forbidden" }))}</p>;
    }
    function ClosedResult() {
      const { value, error, isLoading } = useQueryResult(api.notes.byChannel, { channel: "forbidden" });
      return <p>{isLoading ? "loading" : error ? `error ${error.code}` : show(value)}</p>;
    }
    const fallback = (error: Error) => <b>{`${(error as any).code}: ${error.message}`}</b>;
    const caught: unknown[] = [];
    const thrown = mount(newClient(), <ErrorBoundary fallback={fallback}><Closed /></ErrorBoundary>, {
      onCaughtError: (error) => caught.push(error),
    });
    const returned = mount(newClient(), <ClosedResult />);
    await eventually(() => expect(thrown.el.textContent).toBe("BAD_REQUEST: This channel is closed"));
    await eventually(() => expect(returned.el.textContent).toBe("error BAD_REQUEST"));
    expect(caught).toEqual([expect.objectContaining({ name: "BackendError", code: "BAD_REQUEST" })]);
  });
});

describe("useMutation and useAction", () => {
  it("return stable callbacks resolving with the function's value, after the caller's queries show the write", async () => {
    const callbacks: unknown[] = [];
    let add!: ReturnType<typeof useMutation<typeof api.notes.add>>;
    let shout!: ReturnType<typeof useAction<typeof api.notes.shout>>;
    function Notes({ tick }: { tick: number }) {
      const notes = useQuery(api.notes.byChannel, { channel: "mut" });
      add = useMutation(api.notes.add);
      shout = useAction(api.notes.shout);
      callbacks.push(add, shout);
      return <p>{`${tick} ${show(notes)}`}</p>;
    }
    const client = newClient();
    const { root, el } = mount(client, <Notes tick={0} />);
    await eventually(() => expect(el.textContent).toBe("0 []"));
    flushSync(() => root.render(<BackendProvider client={client}><Notes tick={1} /></BackendProvider>));

    const seen: string[] = [];
    client.subscribe(api.notes.byChannel, { channel: "mut" }, (v) => seen.push(show(v)));
    const value = await add({ channel: "mut", body: "mine" });
    expectTypeOf(value).toEqualTypeOf<string>();
    expect(value).toBe("mut/mine");
    expect(seen.at(-1)).toBe("[mine]"); // read your writes: pushed before the promise resolved
    await eventually(() => expect(el.textContent).toBe("1 [mine]"));

    expect(await shout({ text: "hey" })).toBe("HEY");
    await expect(add({ channel: "mut" } as any)).rejects.toMatchObject({ code: "INVALID_ARGUMENTS" });
    // Every render got the same two callbacks.
    expect(new Set(callbacks.filter((_, i) => i % 2 === 0)).size).toBe(1);
    expect(new Set(callbacks.filter((_, i) => i % 2 === 1)).size).toBe(1);
  });
});

describe("usePreloadedQuery", () => {
  it("shows the preloaded value in the first committed DOM, then updates live", async () => {
    const other = newClient();
    await other.mutation(api.notes.add, { channel: "pre", body: "from server" });
    const preloaded = await preloadQuery(api.notes.byChannel, { channel: "pre" }, { url: app.url });
    expect(preloaded.value).toEqual(["from server"]);

    const renders: unknown[] = [];
    function Notes({ data }: { data: Preloaded<typeof api.notes.byChannel> }) {
      const notes = usePreloadedQuery(data);
      expectTypeOf(notes).toEqualTypeOf<string[]>();
      renders.push(notes);
      return <p>{show(notes)}</p>;
    }
    const client = newClient();
    const { el } = mount(client, <Notes data={preloaded} />);
    expect(el.textContent).toBe("[from server]"); // synchronously, before any server round trip
    expect(renders[0]).toEqual(["from server"]);

    await eventually(() => expect(subscribes("pre")).toHaveLength(1));
    await other.mutation(api.notes.add, { channel: "pre", body: "live" });
    await eventually(() => expect(el.textContent).toBe("[from server,live]"));
    expect(renders).not.toContain(undefined); // never a loading state
  });

  it("hydrates server-rendered markup without a mismatch, then subscribes", async () => {
    const preloaded = await preloadQuery(api.notes.byChannel, { channel: "hydrate" }, { url: app.url });
    function Page({ data }: { data: Preloaded<typeof api.notes.byChannel> }) {
      const notes = usePreloadedQuery(data);
      const [hydrated, setHydrated] = useState(false);
      useEffect(() => setHydrated(true), []);
      return <p data-hydrated={String(hydrated)}>{show(notes)}</p>;
    }
    const client = newClient();
    // The page as the server renders it (no effects run, no subscription), sent as JSON.
    const wire = JSON.parse(JSON.stringify(preloaded)) as typeof preloaded;
    const html = renderToString(<BackendProvider client={client}><Page data={wire} /></BackendProvider>);
    expect(html).toContain("[]");
    expect(subscribes("hydrate")).toHaveLength(0);

    const el = dom.container();
    el.innerHTML = html;
    const recoverable: unknown[] = [];
    const root = hydrateRoot(el, <BackendProvider client={client}><Page data={wire} /></BackendProvider>, {
      onRecoverableError: (error) => recoverable.push(error),
    });
    roots.push(root);
    await eventually(() => expect(el.querySelector("p")?.getAttribute("data-hydrated")).toBe("true"));
    expect(recoverable).toEqual([]);
    expect(el.textContent).toBe("[]");

    await newClient().mutation(api.notes.add, { channel: "hydrate", body: "after hydration" });
    await eventually(() => expect(el.textContent).toBe("[after hydration]"));
  });
});
