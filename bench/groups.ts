/**
 * The registry of benchmark groups, in run order. To add one (e.g. `auth`, `sync`), create
 * `bench/<name>.ts` exporting a {@link BenchGroup} and add it here; `npm run bench -- <name>` then
 * runs it alone.
 */
import { auth } from "./auth.ts";
import { clusterGroup } from "./cluster.ts";
import { fanout } from "./fanout.ts";
import { hash } from "./hash.ts";
import { http } from "./http.ts";
import type { BenchGroup } from "./lib/types.ts";
import { pgFailover } from "./pg-failover.ts";
import { pgReplicas } from "./pg-replicas.ts";
import { pgThroughput } from "./pg-throughput.ts";
import { pgWrites } from "./pg-writes.ts";
import { platform } from "./platform.ts";
import { postgres } from "./postgres.ts";
import { scheduler } from "./scheduler.ts";
import { schema } from "./schema.ts";
import { sockets } from "./sockets.ts";
import { storm } from "./storm.ts";
import { sync } from "./sync.ts";
import { wsCallsPg } from "./ws-calls-pg.ts";

export const groups: Record<string, BenchGroup> = {
  platform,
  http,
  auth,
  hash,
  sync,
  fanout,
  postgres,
  "pg-throughput": pgThroughput,
  "pg-writes": pgWrites,
  "pg-replicas": pgReplicas,
  "pg-failover": pgFailover,
  sockets,
  storm,
  "ws-pg": wsCallsPg,
  cluster: clusterGroup,
  scheduler,
  schema,
};
