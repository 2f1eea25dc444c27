// Scratch: profile the platform server under load.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pointReadBodies } from "./bench/fixtures/point-app.ts";
import { runLoad } from "./bench/lib/load.ts";
import { spawnServer } from "./bench/lib/spawn.ts";
const dir = mkdtempSync(join(tmpdir(), "prof-"));
const which = process.argv[2] ?? "platform";
const s = await spawnServer(`./bench/fixtures/${which === "hello" ? "hono-hello.ts" : which === "raw" ? "../../.scratch-raw-server.ts" : "platform-server.ts"}`, { BENCH_DATA_DIR: dir });
const bodies = pointReadBodies(64);
const run = (d: number) => which === "hello" ? runLoad({ url: `${s.url}/`, durationSec: d }) : runLoad({ url: `${s.url}/api/query`, method: "POST", bodies, durationSec: d });
await run(1);
const r = await run(Number(process.argv[3] ?? 4));
console.log(which, Math.round(r.requestsPerSec));
await s.stop();
