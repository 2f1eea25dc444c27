/**
 * The write transactions of the function runner: each one's writes are published as one commit
 * once it committed (commits/commits.ts), and `ActionCtx.runInTransaction` opens a scope whose
 * queries and mutations join one transaction, taking turns.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Commits } from "./commits/commits.ts";
import type { DocumentWrite } from "./db/read-write-sets.ts";
import { encodeWrites } from "./storage/commit-log/payload.ts";
import type { StorageEngine, WriteTransaction } from "./storage/engine.ts";

/** The write transaction of a `runInTransaction` scope, which its queries and mutations join. */
interface OpenTransaction {
  tx: WriteTransaction;
  writes: DocumentWrite[];
  /** The first error of a mutation inside: the transaction must not commit without its writes. */
  failed?: { error: unknown };
  /** The joined calls take turns: each sees the writes of those before it, none interleaves. */
  turn: Promise<unknown>;
}

/** Where an async context stands in a scope: inside one of its calls (`inTurn`), or waiting for one. */
export interface ScopeEntry {
  scope: OpenTransaction;
  inTurn: boolean;
}

export class TransactionScope {
  /** The scope the current async context runs in, if any (see `run`). */
  private readonly open = new AsyncLocalStorage<ScopeEntry>();

  constructor(
    private readonly engine: StorageEngine,
    private readonly commits: Commits,
  ) {}

  /** The scope the current async context runs in; undefined outside `run`. */
  current(): ScopeEntry | undefined {
    return this.open.getStore();
  }

  /**
   * Runs `fn` as a write transaction of its own, recording its writes into `writes` (new for each
   * attempt: engines may run `fn` again after a conflict); publishes them as one commit after it
   * committed.
   */
  async write<T>(fn: (tx: WriteTransaction, writes: DocumentWrite[]) => Promise<T>): Promise<T> {
    let writes: DocumentWrite[] = [];
    const value = await this.engine.write(
      async (tx) => {
        writes = [];
        return fn(tx, writes);
      },
      // The engine's `writeSet`: the encoded writes, computed only if the engine asks.
      () => (writes.length ? encodeWrites(writes) : undefined),
    );
    if (writes.length) this.commits.publish(writes);
    return value;
  }

  /**
   * Runs a joined call when the calls before it in the scope are done. A call made from inside
   * another (an action's closure) runs at once: waiting for its caller would never end.
   */
  inTurn<T>(entry: ScopeEntry, call: () => Promise<T>): Promise<T> {
    if (entry.inTurn) return call();
    const { scope } = entry;
    const result = scope.turn.then(() => this.open.run({ scope, inTurn: true }, call));
    scope.turn = result.catch(() => undefined);
    return result;
  }

  /** Runs a joined mutation: its failure fails the whole scope, which then must not commit. */
  mutateInTurn<T>(entry: ScopeEntry, call: () => Promise<T>): Promise<T> {
    const { scope } = entry;
    return this.inTurn(entry, () =>
      call().catch((error) => {
        scope.failed ??= { error };
        throw error;
      }),
    );
  }

  /**
   * Runs `fn` as one write transaction that the queries and mutations it calls join (see
   * `ActionCtx.runInTransaction`); publishes the writes after the commit. Inside a scope already,
   * `fn` simply runs in it.
   */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.open.getStore()) return fn();
    return this.write(async (tx, writes) => {
      const scope: OpenTransaction = { tx, writes, turn: Promise.resolve() };
      const result = await this.open.run({ scope, inTurn: false }, fn);
      // A mutation inside failed and `fn` went on: committing would keep only part of its work.
      if (scope.failed) throw scope.failed.error;
      return result;
    });
  }
}
