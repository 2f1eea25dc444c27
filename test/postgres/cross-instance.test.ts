/**
 * Two service instances (and the CLI) on one PostgreSQL database: commits made through one
 * instance reach live subscribers of the other (commit log + LISTEN/NOTIFY), with their exact
 * write set unless it is too large for the log, and env changes propagate. The contract's
 * 2-second bound for env changes is a latency: not asserted here, where tests wait on conditions.
 */
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { Commit } from "../../src/backend/db/read-write-sets.ts";
import { anyApi } from "../../src/backend/functions/references.ts";
import { BackendClient } from "../../src/client/index.ts";
import { modules, routes } from "../fixtures/app.ts";
import schema from "../fixtures/schema.ts";
import { postJson } from "../helpers/http.ts";
import { postgresBinDir, usePostgres } from "../helpers/postgres.ts";
import { PROCESS_TEST_TIMEOUT, ROOT, runCli } from "../helpers/process.ts";
import { startTestService, type TestService } from "../helpers/service.ts";
import { eventually } from "../helpers/wait.ts";

/** Resolves with the first value for which `match` holds. */
function waitFor<T>(values: T[], match: (v: T) => boolean, subscribe: (cb: () => void) => void): Promise<T> {
  return new Promise((resolve) => {
    const check = () => {
      const found = values.find(match);
      if (found !== undefined) resolve(found);
    };
    subscribe(check);
    check();
  });
}

describe.skipIf(!postgresBinDir)("two instances on one PostgreSQL database", () => {
  const server = usePostgres();
  let a: TestService;
  let b: TestService;
  let databaseUrl: string;
  const clients: BackendClient[] = [];

  beforeAll(async () => {
    databaseUrl = await server().createDatabase();
    [a, b] = await Promise.all([
      startTestService({ schema, modules, routes, databaseUrl }),
      startTestService({ schema, modules, routes, databaseUrl }),
    ]);
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  /** A live subscription on instance `service`, recording every value pushed. */
  function subscribe(service: TestService, ref: unknown, args: Record<string, unknown>) {
    const client = new BackendClient(service.url, { WebSocket: WebSocket as any });
    clients.push(client);
    const values: any[] = [];
    const listeners: (() => void)[] = [];
    client.subscribe(ref as any, args, (value) => {
      values.push(value);
      for (const l of listeners) l();
    });
    return {
      values,
      until: (match: (v: any) => boolean) => waitFor(values, match, (cb) => listeners.push(cb)),
    };
  }

  it("pushes a mutation committed through instance A to a WebSocket subscriber on instance B", async () => {
    const live = subscribe(b, anyApi.messages.byAuthor, { author: "across" });
    await live.until((v) => Array.isArray(v) && v.length === 0);
    const sent = await postJson(`${a.url}/api/mutation`, {
      path: "messages:send",
      args: { body: "from A", author: "across" },
    });
    expect(sent.body.status).toBe("success");
    const update = await live.until((v) => v.length === 1);
    expect(update[0]).toMatchObject({ _id: sent.body.value, body: "from A", author: "across" });

    // And the other way round, through B's HTTP API to a subscriber on A.
    const onA = subscribe(a, anyApi.messages.byAuthor, { author: "across" });
    await onA.until((v) => v.length === 1);
    await postJson(`${b.url}/api/mutation`, {
      path: "messages:send",
      args: { body: "from B", author: "across" },
    });
    const both = await onA.until((v) => v.length === 2);
    expect(both.map((m: { body: string }) => m.body)).toEqual(["from A", "from B"]);
  });

  it("carries the exact write set, through the commit log when too large for a notification, and an unknown commit when too large for the log", async () => {
    const commits: Commit[] = [];
    const stop = b.backend.onCommit((c) => commits.push(c));
    try {
      const small = await postJson(`${a.url}/api/mutation`, {
        path: "messages:send",
        args: { body: "precise", author: "sizes" },
      });
      await eventually(() =>
        expect(commits.some((c) => c.writes.some((w) => w.id === small.body.value))).toBe(true),
      );
      const precise = commits.find((c) => c.writes.some((w) => w.id === small.body.value)) as Commit;
      expect(precise.unknown).toBe(false);
      expect(precise.writes).toEqual([
        {
          table: "messages",
          id: small.body.value,
          before: null,
          after: expect.objectContaining({ _id: small.body.value, body: "precise", author: "sizes" }),
        },
      ]);

      // Larger than a notification can carry: B reads the exact write set from the commit log.
      const live = subscribe(b, anyApi.messages.byAuthor, { author: "big" });
      await live.until((v) => Array.isArray(v) && v.length === 0);
      commits.length = 0;
      const big = await postJson(`${a.url}/api/mutation`, {
        path: "messages:send",
        args: { body: "x".repeat(10_000), author: "big" },
      });
      expect(big.body.status).toBe("success");
      const update = await live.until((v) => v.length === 1);
      expect(update[0].body.length).toBe(10_000);
      const logged = commits.find((c) => c.writes.some((w) => w.id === big.body.value));
      expect(logged?.unknown).toBe(false);

      // Larger than the log keeps (256 KB): it still reaches B, as "re-check everything".
      commits.length = 0;
      const huge = await postJson(`${a.url}/api/mutation`, {
        path: "messages:send",
        args: { body: "y".repeat(300_000), author: "big" },
      });
      expect(huge.body.status).toBe("success");
      const both = await live.until((v) => v.length === 2);
      expect(both[1].body.length).toBe(300_000);
      expect(commits.some((c) => c.unknown === true)).toBe(true);
    } finally {
      stop();
    }
  });

  it("lets instance B see an env value set on instance A", async () => {
    await a.backend.env.set("CROSS_INSTANCE_VALUE", "one");
    await eventually(() => expect(b.backend.env.get("CROSS_INSTANCE_VALUE")).toBe("one"));
    await a.backend.env.set("CROSS_INSTANCE_VALUE", "two");
    await eventually(() => expect(b.backend.env.get("CROSS_INSTANCE_VALUE")).toBe("two"));
    await a.backend.env.remove("CROSS_INSTANCE_VALUE");
    await eventually(() => expect(b.backend.env.get("CROSS_INSTANCE_VALUE")).toBe(undefined));
  });

  it("lets both instances see an env value set by the CLI on the same DATABASE_URL", {
    timeout: PROCESS_TEST_TIMEOUT,
  }, async () => {
    const result = await runCli(["env", "set", "FROM_CLI_VALUE", "cli"], {
      env: { DATABASE_URL: databaseUrl, SERVICE_APP: join(ROOT, "test/fixtures/app.ts") },
    });
    expect(result.code).toBe(0);
    await eventually(() => expect(a.backend.env.get("FROM_CLI_VALUE")).toBe("cli"));
    await eventually(() => expect(b.backend.env.get("FROM_CLI_VALUE")).toBe("cli"));
  });
});
