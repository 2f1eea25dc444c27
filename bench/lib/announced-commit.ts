/**
 * What another instance's commit costs this one when nothing here reads its table (`pg-writes`):
 * the commits core of an instance of the bench app (an identity cache, a notify listener), handed
 * `bench:post`-like write sets as the follower hands them over, with the header of
 * `commit-log/payload.ts` (skipped: recorded by table) and without it (an older version's payload:
 * parsed whole, as every one was before). In-process, alternated, the median of the rounds.
 */
import { IdentityCache } from "../../src/backend/auth/identity-cache.ts";
import { Commits } from "../../src/backend/commits/commits.ts";
import { Catalog } from "../../src/backend/db/catalog.ts";
import { encodeWrites } from "../../src/backend/storage/commit-log/payload.ts";
import { schema } from "../fixtures/postgres-app.ts";
import { median } from "./timing.ts";

const COMMITS = 50_000;
const ROUNDS = 5;

/** ns per delivered commit: [without header (parsed), with header (skipped)]. */
export function announcedCommitCost(): { parsedNs: number; skippedNs: number } {
  const catalog = new Catalog(schema);
  const payloads = Array.from({ length: 1024 }, (_, i) => {
    const id = `c5e6bqe2z2twilnloxiipicqjq${String(i).padStart(4, "0")}`;
    const after = {
      channel: "three",
      body: `three message ${i % 16}`,
      _id: id,
      _creationTime: 1795764901947 + i,
    };
    return encodeWrites([{ table: "messages", id, before: null, after }]);
  });
  const legacy = payloads.map((p) => p.slice(p.indexOf("[")));
  const time = (list: string[]) => {
    let emit!: (payload?: string) => void;
    const commits = new Commits(catalog, {
      onExternalCommit: (listener) => {
        emit = listener;
        return () => {};
      },
    });
    commits.followOtherInstances();
    new IdentityCache(commits);
    commits.on("listeners", () => {});
    const start = process.hrtime.bigint();
    for (let i = 0; i < COMMITS; i++) emit(list[i & 1023]);
    return Number(process.hrtime.bigint() - start) / COMMITS;
  };
  const parsed: number[] = [];
  const skipped: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    parsed.push(time(legacy));
    skipped.push(time(payloads));
  }
  return { parsedNs: median(parsed), skippedNs: median(skipped) };
}
