/**
 * Live connections across two instances of the example app on one PostgreSQL database: a client
 * connected to instance B is listed by the admin console's query on instance A (since when,
 * address, user agent, subscriptions, session), "Disconnect" on A closes it on B with 4010 and
 * the client reconnects (its session is still valid) and is listed again; rows of an instance
 * that stopped beating are removed by the live one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { anyApi } from "../../src/backend/functions/references.ts";
import { BackendClient } from "../../src/client/index.ts";
import { CloseCode } from "../../src/protocol/close-codes.ts";
import { type ExampleApp, startExampleApp } from "../helpers/example-app.ts";
import { postgresBinDir, usePostgres } from "../helpers/postgres.ts";
import { eventually } from "../helpers/wait.ts";

const USER_AGENT = "probe-agent/1.0 (live connections test)";
/** Fast presence so the test waits little; the behaviour is the same at the defaults. */
const sync = { presence: { intervalMs: 100, heartbeatMs: 400 } };

/** `ws` with a user agent, recording the close codes its sockets got. */
const closeCodes: number[] = [];
class ProbeSocket extends WebSocket {
  constructor(url: string, protocols?: string | string[]) {
    super(url, protocols, { headers: { "user-agent": USER_AGENT } });
    this.on("close", (code) => closeCodes.push(code));
  }
}

describe.skipIf(!postgresBinDir)("live connections across two instances", { timeout: 120_000 }, () => {
  const server = usePostgres();
  let a: ExampleApp;
  let b: ExampleApp;
  let adminToken: string;
  let databaseUrl: string;
  const clients: BackendClient[] = [];

  beforeAll(async () => {
    databaseUrl = await server().createDatabase();
    // One after the other: the first start generates the auth secrets both then share.
    a = await startExampleApp({ databaseUrl, sync });
    b = await startExampleApp({ databaseUrl, sync });
    await a.signUp("admin@example.com");
    await a.makeAdmin("admin@example.com");
    adminToken = (await a.signUp("admin2@example.com")).token;
    await a.makeAdmin("admin2@example.com");
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await a?.close();
    await b?.close();
  });

  const listOnA = async (userId: string) => {
    const res = await a.call("query", "admin:connections", { userId }, adminToken);
    expect(res.body.status, res.text).toBe("success");
    return res.body.value as any[];
  };

  it("lists a client of B on A, and Disconnect on A closes it on B; it reconnects", async () => {
    // Each test instance has its own SITE_URL (the tokens' issuer): Dana signs in on B.
    const dana = await b.signUp("dana@example.com");
    const sessionId = JSON.parse(Buffer.from(dana.token.split(".")[1], "base64url").toString()).sessionId;
    expect(typeof sessionId).toBe("string");

    // The console's live query on A, pushed to as B's presence rows change.
    const adminConsole = new BackendClient(a.url, { WebSocket: WebSocket as any });
    clients.push(adminConsole);
    adminConsole.setAuth(async () => adminToken);
    const pushed: any[][] = [];
    adminConsole.subscribe(anyApi.admin.connections, { userId: dana.userId }, (v) => pushed.push(v));
    await eventually(() => expect(pushed.at(-1)).toEqual([]));

    const client = new BackendClient(b.url, { WebSocket: ProbeSocket as any });
    clients.push(client);
    client.setAuth(async () => dana.token);
    const me: any[] = [];
    client.subscribe(anyApi.users.me, {}, (v) => me.push(v));
    const messages: any[] = [];
    client.subscribe(anyApi.messages.list, {}, (v) => messages.push(v));
    await eventually(() => expect(me.at(-1)?.email).toBe("dana@example.com"));

    const [first] = await eventually(async () => {
      const rows = await listOnA(dana.userId);
      expect(rows).toHaveLength(1);
      expect(rows[0].subscriptions).toBe(2);
      return rows;
    });
    expect(first).toMatchObject({
      subject: dana.userId,
      sessionId,
      clientIp: "127.0.0.1",
      userAgent: USER_AGENT,
    });
    await eventually(() => expect(pushed.at(-1)?.[0]?._id).toBe(first._id));
    expect(first.openedAt).toBeLessThanOrEqual(Date.now());
    expect(first.openedAt).toBeGreaterThan(Date.now() - 60_000);

    // Only administrators may disconnect.
    const refused = await b.call("mutation", "admin:disconnect", { sessionId }, dana.token);
    expect(refused.body.code).toBe("FORBIDDEN");
    expect(closeCodes).not.toContain(CloseCode.DISCONNECTED);

    const done = await a.call("mutation", "admin:disconnect", { sessionId }, adminToken);
    expect(done.body.status, done.text).toBe("success");
    await eventually(() => expect(closeCodes).toContain(CloseCode.DISCONNECTED));

    // The session is still valid: the client reconnects and is listed again, as a new connection.
    await eventually(async () => {
      const rows = await listOnA(dana.userId);
      expect(rows).toHaveLength(1);
      expect(rows[0]._id).not.toBe(first._id);
      expect(rows[0].subscriptions).toBe(2);
    });
    // Its subscriptions were made again: a new message reaches it.
    const sent = await b.call("mutation", "messages:send", { body: "still live" }, dana.token);
    expect(sent.body.status, sent.text).toBe("success");
    await eventually(() => expect(JSON.stringify(messages.at(-1))).toContain("still live"));
  });

  it("removes the rows of an instance that stopped beating, and at start those of one that never beat", async () => {
    const erin = await a.signUp("erin@example.com");
    const old = Date.now() - 60_000;
    const row = (instanceId: string) => ({
      instanceId,
      openedAt: old,
      subject: erin.userId,
      subscriptions: 1,
    });
    await a.backend.write(async (db) => {
      await db.insert("_instances", { instanceId: "crashed-instance", heartbeatAt: old });
      await db.insert("_connections", row("crashed-instance"));
    });
    // Listed until a live instance's heartbeat removes it.
    await eventually(async () => expect(await listOnA(erin.userId)).toEqual([]));
    const instances = await a.backend.read((db) => db.query("_instances").collect());
    expect(instances.map((r: any) => r.instanceId)).not.toContain("crashed-instance");
    // Both live instances beat (on a loaded machine one may be taken for dead for a moment: it
    // comes back at its next beat, see the test below).
    await eventually(async () =>
      expect(await a.backend.read((db) => db.query("_instances").collect())).toHaveLength(2),
    );

    // A row whose instance has no heartbeat row at all (it crashed before its first beat).
    await a.backend.write((db) => db.insert("_connections", row("never-beat")));
    expect(await listOnA(erin.userId)).toHaveLength(1);
    const c = await startExampleApp({ databaseUrl, sync });
    try {
      await eventually(async () => expect(await listOnA(erin.userId)).toEqual([]));
    } finally {
      await c.close();
    }
  });

  it("an instance taken for dead while alive lists its connections again at its next beat", async () => {
    const gina = await b.signUp("gina@example.com");
    const client = new BackendClient(b.url, { WebSocket: ProbeSocket as any });
    clients.push(client);
    client.setAuth(async () => gina.token);
    client.subscribe(anyApi.users.me, {}, () => {});
    const [listed] = await eventually(async () => {
      const rows = await listOnA(gina.userId);
      expect(rows).toHaveLength(1);
      return rows;
    });
    const { instanceId } = listed;
    expect(typeof instanceId).toBe("string");
    // What A's beat does to an instance silent for three beats (a stall, a network partition):
    // its heartbeat row and every connection row of it go.
    await a.backend.write(async (db) => {
      for (const row of await db.query("_connections").collect())
        if (row.instanceId === instanceId) await db.delete(row._id);
      for (const row of await db.query("_instances").collect())
        if (row.instanceId === instanceId) await db.delete(row._id);
    });
    expect(await listOnA(gina.userId)).toEqual([]);
    // B is alive: its next beat finds its heartbeat row gone and writes its rows anew.
    await eventually(async () => {
      const rows = await listOnA(gina.userId);
      expect(rows).toHaveLength(1);
      expect(rows[0]._id).not.toBe(listed._id);
      expect(rows[0]).toMatchObject({ subject: gina.userId, userAgent: USER_AGENT, subscriptions: 1 });
    });
    client.close();
    await eventually(async () => expect(await listOnA(gina.userId)).toEqual([]));
  });

  it("a closed instance removes its own rows", async () => {
    const frank = await b.signUp("frank@example.com");
    const client = new BackendClient(b.url, { WebSocket: ProbeSocket as any });
    clients.push(client);
    client.setAuth(async () => frank.token);
    client.subscribe(anyApi.users.me, {}, () => {});
    await eventually(async () => expect(await listOnA(frank.userId)).toHaveLength(1));
    await b.close();
    await eventually(async () => expect(await listOnA(frank.userId)).toEqual([]));
  });
});
