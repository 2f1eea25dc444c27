// Temporary (not committed): CPU per write and per read of the bench app on PostgreSQL, in-process.
import { Backend } from "../src/backend/runtime.ts";
import { openEngine } from "../src/backend/storage/open.ts";
import { authConfig, modules, schema } from "./fixtures/postgres-app.ts";
import { rs256Tokens } from "./lib/rs256-tokens.ts";
import { startPostgres } from "../test/helpers/postgres.ts";

const pg = await startPostgres();
const url = await pg.createDatabase();
const { jwk, sign } = await rs256Tokens("https://i", "a");
const backend = new Backend({ schema, modules, engine: openEngine(url), auth: authConfig(jwk, "https://i", "a") });
await backend.start();
const N = Number(process.env.N ?? 3000);
const C = 16;
async function writes(n: number) {
  let i = 0;
  await Promise.all(Array.from({ length: C }, async () => {
    while (i < n) { i++; await backend.runMutation("bench:post", { channel: "c", body: `b ${i}` }); }
  }));
}
const created: any = await backend.runMutation("bench:createSession", {}); const { userId, sessionId } = created.value ?? created;
const token = await sign(userId, sessionId);
async function reads(n: number) {
  let i = 0;
  await Promise.all(Array.from({ length: C }, async () => {
    while (i < n) { i++; await backend.runQuery("bench:me", {}, { token }); }
  }));
}
await writes(500); await reads(500);
for (const [name, fn] of [["write", writes], ["read", reads]] as const) {
  const c0 = process.cpuUsage(); const t0 = performance.now();
  await fn(N);
  const c = process.cpuUsage(c0); const ms = performance.now() - t0;
  console.log(`${name}: ${((c.user + c.system) / N).toFixed(1)} µs CPU each, ${(N / ms * 1000).toFixed(0)}/s`);
}
await backend.close();
await pg.stop();
