/**
 * Another instance's commit as its payload announced it: the tables it wrote are known at once
 * (the payload's header, `commit-log/payload.ts`), its documents are parsed only when someone
 * reads `writes` — a live subscription or an identity cache entry over one of those tables, a
 * retained reader of the history. With several instances each hears every other's commits, and
 * most touch nothing this one holds: parsing them all was most of what they cost it.
 *
 * A commit nobody parsed is recorded in the history by table only (`history.ts`: any later read of
 * one of its tables counts as touched), so skipping the parse can only make a check say "changed"
 * more often, never less. A header followed by JSON that does not parse (or names a table the
 * header does not) cannot be taken back from listeners that already skipped it: `writes` is then
 * empty, `unknown` set, and `onMalformed` runs, for the caller to deliver an unknown commit
 * ("re-check everything") right after.
 */
import type { Commit, DocumentWrite } from "../db/read-write-sets.ts";
import { decodeWrites } from "../storage/commit-log/payload.ts";

export class AnnouncedCommit implements Commit {
  unknown = false;
  private parsed?: DocumentWrite[];
  private payload?: string;

  constructor(
    readonly sequence: number,
    readonly tables: readonly string[],
    payload: string,
    private readonly onMalformed: (commit: AnnouncedCommit) => void,
  ) {
    this.payload = payload;
  }

  /** Whether `writes` has been read (parsed) yet. */
  get isParsed(): boolean {
    return this.parsed !== undefined;
  }

  get writes(): DocumentWrite[] {
    if (this.parsed) return this.parsed;
    const writes = decodeWrites(this.payload);
    // The string may be large; the parsed writes replace it.
    this.payload = undefined;
    if (writes) {
      this.parsed = writes;
      return writes;
    }
    this.parsed = [];
    this.unknown = true;
    this.onMalformed(this);
    return this.parsed;
  }
}

/** True when `commit`'s writes are at hand without parsing anything. */
export function writesAtHand(commit: Commit): boolean {
  return !(commit instanceof AnnouncedCommit) || commit.isParsed;
}
