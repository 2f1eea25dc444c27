/**
 * Reconnect after a server restart: the example app stops (clients get 1001) and starts again on
 * the same port and SQLite file; the client reconnects with backoff, authenticates with the token
 * it holds, restores its subscription and keeps receiving updates, without signing in again.
 */
import { afterAll, afterEach, expect, it } from "vitest";
import { api } from "../../examples/app/app.ts";
import { type ExampleApp, freePort, startExampleApp } from "../helpers/example-app.ts";
import { closeClients, liveClient, watch } from "../helpers/live-client.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";
import { eventually } from "../helpers/wait.ts";

const apps: ExampleApp[] = [];
afterEach(() => closeClients());
afterAll(async () => {
  for (const a of apps) await a.close();
});

it("restores subscriptions and authentication after the server restarts", async () => {
  const port = await freePort();
  const databaseUrl = tempDatabaseFile();
  const first = await startExampleApp({ port, databaseUrl });
  apps.push(first);
  const reader = await first.signUp("restart-reader@example.com");
  const writer = await first.signUp("restart-writer@example.com");
  const live = liveClient(first.url, reader.browser);
  const list = watch(live.client, api.messages.list);
  await eventually(() => expect(list.values).toEqual([[]]));
  expect((await first.call("mutation", "messages:send", { body: "before" }, writer.token)).status).toBe(200);
  await eventually(() => expect(list.last().map((m: any) => m.body)).toEqual(["before"]));

  await first.close();
  await eventually(() => expect(live.client.connectionState).toBe("reconnecting"));
  const second = await startExampleApp({ port, databaseUrl });
  apps.push(second);
  expect(second.url).toBe(first.url);

  await eventually(() => expect(live.received.filter((m) => m.type === "connected")).toHaveLength(2));
  expect(live.received.filter((m) => m.type === "connected").map((m) => m.authenticated)).toEqual([
    true,
    true,
  ]);
  // The cached token (still fresh, same keys in the same database) was reused: no token call, no sign-in.
  expect(live.tokenStatuses).toEqual([200]);
  expect(live.authChanges).toEqual([true]);
  expect(live.client.isAuthenticated).toBe(true);
  expect(live.client.connectionState).toBe("open");

  // The restored subscription is live on the new server.
  expect((await second.call("mutation", "messages:send", { body: "after" }, writer.token)).status).toBe(200);
  await eventually(() => expect(list.last().map((m: any) => m.body)).toEqual(["before", "after"]));
  expect(list.errors).toEqual([]);
});
