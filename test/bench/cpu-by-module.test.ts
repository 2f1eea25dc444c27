import { describe, expect, it } from "vitest";
import { chargeSamples } from "../../bench/lib/cpu-by-module.ts";

/** One sample as `perf script -F comm,ip,sym` prints it: the thread's name, then frames leaf first. */
const sample = (comm: string, ...frames: string[]) =>
  `${comm.padStart(16)} \n${frames.map((f, i) => `\t    7f65b7a5${i.toString(16).padStart(4, "0")} ${f}`).join("\n")}\n\n`;

describe("CPU by module (perf samples charged to code of ours)", () => {
  it("charges a sample to the deepest frame of ours, not to the library code it called", () => {
    const script =
      sample(
        "node-MainThread",
        "writev",
        "JS:*'query /work/main/node_modules/pg/lib/client.js:668:8",
        "JS:*'run file:///work/main/src/backend/storage/postgres/transaction.ts:1:2046",
        "JS:+'mutate file:///work/main/src/backend/runtime.ts:1:5170",
      ) +
      sample(
        "node-MainThread",
        "JS:*'handle file:///repo/src/backend/http/fast-api.ts:1:10",
        "JS:*'run file:///work/main/src/backend/storage/postgres/transaction.ts:1:2046",
      ) +
      sample("node-MainThread", "JS:*'post /ci/bench/fixtures/raw-pg-write.ts:1:1");
    const ns = chargeSamples(script, 1000);
    expect(Object.fromEntries(ns)).toEqual({
      "src/backend/storage/postgres/transaction.ts": 1000,
      "src/backend/http/fast-api.ts": 1000,
      "bench/fixtures/raw-pg-write.ts": 1000,
    });
  });

  it("charges samples with no frame of ours to what they are", () => {
    const script =
      sample("node-V8Worker", "v8::internal::Scavenger::ScavengeObject") +
      sample("node-MainThread", "v8::internal::Scavenger::Process", "v8::internal::Heap::Scavenge") +
      sample("node-MainThread", "epoll_wait", "uv__io_poll", "uv_run") +
      sample(
        "node-MainThread",
        "JS:*'parse /work/main/node_modules/pg-protocol/dist/parser.js:26:10",
        "JS:*'onStreamRead node:internal/stream_base_commons:171:22",
      ) +
      sample("node-MainThread", "JS:*'emit node:events:489:44");
    expect(Object.fromEntries(chargeSamples(script, 1))).toEqual({
      "(V8 worker threads: GC, compiling)": 1,
      "(garbage collector, main thread)": 1,
      "(event loop: libuv and the kernel, no JavaScript)": 1,
      "(pg, called from nothing of ours)": 1,
      "(Node, called from nothing of ours)": 1,
    });
  });
});
