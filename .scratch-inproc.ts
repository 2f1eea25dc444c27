// Scratch: in-process point-read cost breakdown.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Backend } from "./src/backend/runtime.ts";
import { SqliteEngine } from "./src/backend/storage/sqlite.ts";
import { modules, schema, seedItems, pointReadBodies } from "./bench/fixtures/point-app.ts";
const dir = mkdtempSync(join(tmpdir(), "inproc-"));
const backend = new Backend({ schema, modules, engine: new SqliteEngine({ filename: join(dir, "db.sqlite") }) });
await backend.start();
await seedItems(backend);
const args = pointReadBodies(64).map((b) => JSON.parse(b).args);
const eng = backend.engine as any;
async function time(name: string, fn: (i: number) => Promise<unknown>, n = 100000) {
  for (let i = 0; i < 20000; i++) await fn(i);
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn(i);
  console.log(name, (Number(process.hrtime.bigint() - t) / n / 1000).toFixed(2), "µs");
}
for (let r = 0; r < 2; r++) {
await time("runQuery byKey", (i) => backend.runQuery("items:byKey", args[i & 63]));
await time("runQuery noop", () => backend.runQuery("items:noop", {}));
await time("engine.read empty", () => eng.read(async () => null));
}

import Database from "better-sqlite3";
import { encodeKey, prefixEnd } from "./src/backend/storage/index-key.ts";
const db = new Database(join(dir, "db.sqlite"));
const keys = args.map((a) => { const k = encodeKey([a.key]); return [k, prefixEnd(k)]; });
const all = db.prepare('SELECT "k_by_key" AS key, doc FROM "t_items" WHERE "k_by_key" >= ? AND "k_by_key" < ? ORDER BY "k_by_key" ASC LIMIT ?');
const docOnly = db.prepare('SELECT doc FROM "t_items" WHERE "k_by_key" >= ? AND "k_by_key" < ? ORDER BY "k_by_key" ASC LIMIT ?');
const begin = db.prepare("BEGIN"), commit = db.prepare("COMMIT");
for (let r = 0; r < 2; r++) {
await time("stmt.all key+doc", async (i) => all.all(keys[i & 63][0], keys[i & 63][1], 2));
await time("stmt.all doc", async (i) => docOnly.all(keys[i & 63][0], keys[i & 63][1], 2));
await time("begin+all+commit", async (i) => { begin.run(); all.all(keys[i & 63][0], keys[i & 63][1], 2); commit.run(); });
await time("begin+all+commit+parse", async (i) => { begin.run(); const rows = all.all(keys[i & 63][0], keys[i & 63][1], 2) as any[]; rows.map((r) => JSON.parse(r.doc)); commit.run(); });
await time("encodeKey+prefixEnd", async (i) => { const k = encodeKey([args[i & 63].key]); prefixEnd(k); });
}
process.exit(0);
