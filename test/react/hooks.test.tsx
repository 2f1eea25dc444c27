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
import { eventually } from "../helpers/wait.ts";
import { api, type NotesApp, startNotesApp } from "./fixtures/notes-app.ts";
import { type Dom, ErrorBoundary, installDom, RecordingWebSocket, sentFrames } from "./support.tsx";

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
  sentFrames.filter(
    (f) => f.type === "subscribe" && f.path === "notes:byChannel" && f.args.channel === channel,
  );

type NotesRef = typeof api.notes.byChannel;

/** A channel's notes, live; `renders` records the value of every render. */
function ChannelNotes({ channel, renders }: { channel: string; tick?: number; renders?: unknown[] }) {
  const notes = useQuery(api.notes.byChannel, { channel }); // a new args object every render
  expectTypeOf(notes).toEqualTypeOf<string[] | undefined>();
  renders?.push(notes);
  return <p>{show(notes)}</p>;
}

/** Skipped while `channel` is null. */
function MaybeNotes({ channel }: { channel: string | null }) {
  return <p>{show(useQuery(api.notes.byChannel, channel === null ? "skip" : { channel }))}</p>;
}

function NotesResult({ channel }: { channel: string }) {
  const { value, error, isLoading } = useQueryResult(api.notes.byChannel, { channel });
  return <p>{isLoading ? "loading" : error ? `error ${error.code}` : show(value)}</p>;
}

interface Calls {
  add: ReturnType<typeof useMutation<typeof api.notes.add>>;
  shout: ReturnType<typeof useAction<typeof api.notes.shout>>;
}

/** A live query plus mutation and action callbacks, handed to `onRender` on every render. */
function NotesWithCalls({ tick, onRender }: { tick: number; onRender: (calls: Calls) => void }) {
  const notes = useQuery(api.notes.byChannel, { channel: "mut" });
  onRender({ add: useMutation(api.notes.add), shout: useAction(api.notes.shout) });
  return <p>{`${tick} ${show(notes)}`}</p>;
}

function PreloadedNotes({ data, renders }: { data: Preloaded<NotesRef>; renders?: unknown[] }) {
  const notes = usePreloadedQuery(data);
  expectTypeOf(notes).toEqualTypeOf<string[]>();
  renders?.push(notes);
  return <p>{show(notes)}</p>;
}

/** Marks itself hydrated once its effects ran in the browser. */
function HydratingPage({ data }: { data: Preloaded<NotesRef> }) {
  const notes = usePreloadedQuery(data);
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);
  return <p data-hydrated={String(hydrated)}>{show(notes)}</p>;
}

describe("useQuery", () => {
  it("renders undefined while loading, then the result, then live updates from another client's mutation", async () => {
    const renders: unknown[] = [];
    const { el } = mount(newClient(), <ChannelNotes channel="live" renders={renders} />);
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
    const client = newClient();
    const render = (channel: string, tick: number) =>
      flushSync(() =>
        root.render(
          <BackendProvider client={client}>
            <ChannelNotes channel={channel} tick={tick} />
          </BackendProvider>,
        ),
      );
    const { root, el } = mount(client, <ChannelNotes channel="args-a" tick={0} />);
    await eventually(() => expect(el.textContent).toBe("[]"));
    const firstId = subscribes("args-a")[0]?.id;
    expect(subscribes("args-a")).toHaveLength(1);

    for (let tick = 1; tick <= 3; tick++) render("args-a", tick);
    await other.mutation(api.notes.add, { channel: "args-a", body: "still live" });
    await eventually(() => expect(el.textContent).toBe("[still live]"));
    expect(subscribes("args-a")).toHaveLength(1);
    expect(sentFrames.some((f) => f.type === "unsubscribe" && f.id === firstId)).toBe(false);

    render("args-b", 4);
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
    const { root, el } = mount(newClient(), <ChannelNotes channel="unmount" />);
    await eventually(() => expect(el.textContent).toBe("[]"));
    expect(app.subscriptionCount()).toBe(1);
    const id = subscribes("unmount")[0].id;
    root.unmount();
    await eventually(() => expect(app.subscriptionCount()).toBe(0));
    expect(sentFrames).toContainEqual({ type: "unsubscribe", id });
  });

  it('does not subscribe with "skip", and subscribes once args are given', async () => {
    const client = newClient();
    const { root, el } = mount(client, <MaybeNotes channel={null} />);
    // A one-shot query round-trips through the same connection, so a subscribe would have been sent.
    await client.query(api.notes.byChannel, { channel: "other" });
    expect(el.textContent).toBe("loading");
    expect(subscribes("skipped")).toHaveLength(0);
    flushSync(() =>
      root.render(
        <BackendProvider client={client}>
          <MaybeNotes channel="skipped" />
        </BackendProvider>,
      ),
    );
    await eventually(() => expect(el.textContent).toBe("[]"));
    expect(subscribes("skipped")).toHaveLength(1);
  });

  it("throws a failing query's error to the nearest error boundary; useQueryResult returns it", async () => {
    const fallback = (error: Error) => <b>{`${(error as any).code}: ${error.message}`}</b>;
    const caught: unknown[] = [];
    const thrown = mount(
      newClient(),
      <ErrorBoundary fallback={fallback}>
        <ChannelNotes channel="forbidden" />
      </ErrorBoundary>,
      {
        onCaughtError: (error) => caught.push(error),
      },
    );
    const returned = mount(newClient(), <NotesResult channel="forbidden" />);
    await eventually(() => expect(thrown.el.textContent).toBe("BAD_REQUEST: This channel is closed"));
    await eventually(() => expect(returned.el.textContent).toBe("error BAD_REQUEST"));
    expect(caught).toEqual([expect.objectContaining({ name: "BackendError", code: "BAD_REQUEST" })]);
  });
});

describe("useMutation and useAction", () => {
  it("return stable callbacks resolving with the function's value, after the caller's queries show the write", async () => {
    const seenCalls: Calls[] = [];
    const onRender = (calls: Calls) => seenCalls.push(calls);
    const client = newClient();
    const { root, el } = mount(client, <NotesWithCalls tick={0} onRender={onRender} />);
    await eventually(() => expect(el.textContent).toBe("0 []"));
    flushSync(() =>
      root.render(
        <BackendProvider client={client}>
          <NotesWithCalls tick={1} onRender={onRender} />
        </BackendProvider>,
      ),
    );
    const { add, shout } = seenCalls[seenCalls.length - 1];

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
    expect(seenCalls.length).toBeGreaterThan(2);
    expect(new Set(seenCalls.map((c) => c.add)).size).toBe(1);
    expect(new Set(seenCalls.map((c) => c.shout)).size).toBe(1);
  });
});

describe("usePreloadedQuery", () => {
  it("shows the preloaded value in the first committed DOM, then updates live", async () => {
    const other = newClient();
    await other.mutation(api.notes.add, { channel: "pre", body: "from server" });
    const preloaded = await preloadQuery(api.notes.byChannel, { channel: "pre" }, { url: app.url });
    expect(preloaded.value).toEqual(["from server"]);

    const renders: unknown[] = [];
    const { el } = mount(newClient(), <PreloadedNotes data={preloaded} renders={renders} />);
    expect(el.textContent).toBe("[from server]"); // synchronously, before any server round trip
    expect(renders[0]).toEqual(["from server"]);

    await eventually(() => expect(subscribes("pre")).toHaveLength(1));
    await other.mutation(api.notes.add, { channel: "pre", body: "live" });
    await eventually(() => expect(el.textContent).toBe("[from server,live]"));
    expect(renders).not.toContain(undefined); // never a loading state
  });

  it("hydrates server-rendered markup without a mismatch, then subscribes", async () => {
    const preloaded = await preloadQuery(api.notes.byChannel, { channel: "hydrate" }, { url: app.url });
    const client = newClient();
    // The page as the server renders it (no effects run, no subscription), sent as JSON.
    const wire = JSON.parse(JSON.stringify(preloaded)) as typeof preloaded;
    const page = (
      <BackendProvider client={client}>
        <HydratingPage data={wire} />
      </BackendProvider>
    );
    const html = renderToString(page);
    expect(html).toContain("[]");
    expect(html).toContain('data-hydrated="false"');
    expect(subscribes("hydrate")).toHaveLength(0);

    const el = dom.container();
    el.innerHTML = html;
    const recoverable: unknown[] = [];
    const root = hydrateRoot(el, page, { onRecoverableError: (error) => recoverable.push(error) });
    roots.push(root);
    await eventually(() => expect(el.querySelector("p")?.getAttribute("data-hydrated")).toBe("true"));
    expect(recoverable).toEqual([]);
    expect(el.textContent).toBe("[]");

    await newClient().mutation(api.notes.add, { channel: "hydrate", body: "after hydration" });
    await eventually(() => expect(el.textContent).toBe("[after hydration]"));
  });
});
