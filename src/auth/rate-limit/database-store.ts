/**
 * Rate-limit counts in the database (Better Auth's `rateLimit` model: key, count, lastRequest), so
 * every instance of the service counts the same client together.
 *
 * Better Auth 1.4's storage API is a read (`get`) followed by a write of the count it computed
 * (`set`); two instances serving the same client at once would both write `count + 1` and lose one.
 * Here each write is conditional on the row still holding what was read (a compare-and-set through
 * `updateMany`, one transaction), and the key is unique, so a lost race is seen and the request is
 * counted again on top of the winner's count. No count is lost; at most the requests in flight at
 * the moment a limit is reached get through (each was checked against the count it read). 1.7
 * calls `consume`, the same read and conditional write, decided again after a lost race; one
 * process runs the consumes of a key one after another, so only other instances can race it.
 *
 * Only endpoints with a rule of their own (sign-in, reset, OTP, …) are counted here, one row per
 * client (IPv6: per /64) and rule pattern, so made-up paths cannot grow the table; every other path
 * stays under the general limit of this process's memory store. Rows whose last request is older
 * than the longest rule's window count nothing any more (Better Auth starts such a count afresh);
 * they are deleted, at most once per window, before a new row is created, so the table holds the
 * clients of about one window rather than every client ever seen.
 */
import type { BetterAuthOptions } from "better-auth";
import { isAppError, logger } from "service-auth/server";
import { inOneTimeTransaction } from "../one-time/routes.ts";
import { clientAndPath, ruleOf } from "./keys.ts";
import { consumeStep, type RateLimitCount, type RateLimitEntry, type RateLimitStore } from "./store.ts";

/** Better Auth's model name of the counts. */
export const RATE_LIMIT_MODEL = "rateLimit";

/** The count and time a row held when read: what a later write is conditional on. */
type Seen = RateLimitCount;

/**
 * Where a read entry remembers what the row held. Better Auth hands the entry back to `set` as
 * `{ ...entry, count, lastRequest }`, so the read values travel with it.
 */
const SEEN = Symbol("rateLimit.seen");

type SeenEntry = RateLimitEntry & { [SEEN]?: Seen };

/** The part of a Better Auth database adapter the counts need. */
interface CountsAdapter {
  findOne(args: { model: string; where: { field: string; value: string }[] }): Promise<unknown>;
  create(args: { model: string; data: Record<string, unknown> }): Promise<unknown>;
  updateMany(args: {
    model: string;
    where: { field: string; value: string | number }[];
    update: Record<string, unknown>;
  }): Promise<number>;
  deleteMany(args: {
    model: string;
    where: { field: string; operator: "lt"; value: number }[];
  }): Promise<number>;
}

/** Conditional writes before a request is given up on (logged, not counted). */
const MAX_ATTEMPTS = 5;

/** When the counts' rows are pruned, see the module comment. */
export interface PruneOptions {
  /** Rows whose `lastRequest` is older than this many ms are deleted: the longest rule's window. */
  retainMs: number;
  /** The clock (ms since epoch); `Date.now` unless a test sets it. */
  now?: () => number;
}

/** The rows of the counts, by the platform's key (`<client>|<rule pattern>`). */
class CountsTable {
  /** When the next prune is due (ms since epoch); the first new row prunes. */
  private nextPrune = 0;

  constructor(
    private readonly adapter: () => Promise<CountsAdapter>,
    private readonly prune: PruneOptions,
  ) {}

  /** Deletes the rows no rule counts any more, at most once per `retainMs`. */
  private async pruneIfDue(): Promise<void> {
    const now = (this.prune.now ?? Date.now)();
    if (now < this.nextPrune) return;
    this.nextPrune = now + this.prune.retainMs;
    const deleted = await (await this.adapter()).deleteMany({
      model: RATE_LIMIT_MODEL,
      where: [{ field: "lastRequest", operator: "lt", value: now - this.prune.retainMs }],
    });
    if (deleted > 0) logger.info("rate limit counts pruned", { rows: deleted });
  }

  async read(key: string): Promise<Seen | undefined> {
    const row = (await (
      await this.adapter()
    ).findOne({
      model: RATE_LIMIT_MODEL,
      where: [{ field: "key", value: key }],
    })) as { count: number | bigint; lastRequest: number | bigint } | null;
    return row ? { count: Number(row.count), lastRequest: Number(row.lastRequest) } : undefined;
  }

  /** Creates the row; false when another instance created it first (the key is unique). */
  async insert(key: string, value: Seen): Promise<boolean> {
    await this.pruneIfDue();
    try {
      await (await this.adapter()).create({ model: RATE_LIMIT_MODEL, data: { key, ...value } });
      return true;
    } catch (error) {
      if (isAppError(error) && error.code === "CONFLICT") return false;
      throw error;
    }
  }

  /** Writes `next` if the row still holds `seen`; false when another write came between. */
  async replace(key: string, seen: Seen, next: Seen): Promise<boolean> {
    const updated = await (await this.adapter()).updateMany({
      model: RATE_LIMIT_MODEL,
      where: [
        { field: "key", value: key },
        { field: "count", value: seen.count },
        { field: "lastRequest", value: seen.lastRequest },
      ],
      update: { ...next },
    });
    return updated > 0;
  }

  /** Counts one more request on whatever the row holds now (after a lost race). */
  async hit(key: string, now: number): Promise<void> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const current = await this.read(key);
      if (current === undefined) {
        if (await this.insert(key, { count: 1, lastRequest: now })) return;
      } else {
        const next = { count: current.count + 1, lastRequest: Math.max(current.lastRequest, now) };
        if (await this.replace(key, current, next)) return;
      }
    }
    logger.warn("rate limit count not written: too much contention on one key", { attempts: MAX_ATTEMPTS });
  }
}

/**
 * The Better Auth adapter of `database` when it is an adapter factory (the platform's adapters
 * are), made on first use from `options`: the final options, with `rateLimit.storage: "database"`
 * so the adapter knows the model.
 */
export function adapterOf(
  database: BetterAuthOptions["database"],
  options: () => BetterAuthOptions,
): (() => Promise<CountsAdapter>) | undefined {
  if (typeof database !== "function") return undefined;
  let made: Promise<CountsAdapter> | undefined;
  return () => {
    made ??= Promise.resolve(database(options()) as unknown as CountsAdapter);
    return made;
  };
}

/**
 * True for the data functions' refusal of the `rateLimit` model when the schema does not declare
 * it: `BAD_REQUEST` naming the model directly, `INVALID_ARGUMENTS` on `args.model` through the
 * functions (the only model this store asks for).
 */
function isMissingTable(error: unknown): boolean {
  if (!isAppError(error)) return false;
  const data = error.data as { model?: unknown; path?: unknown } | undefined;
  return (
    (error.code === "BAD_REQUEST" && data?.model === RATE_LIMIT_MODEL) ||
    (error.code === "INVALID_ARGUMENTS" && data?.path === "args.model")
  );
}

let missingTableLogged = false;

/** The last `consume` of each shared key in this process, which the next one waits for. */
const consuming = new Map<string, Promise<unknown>>();

/**
 * Runs `task` once every earlier `consume` of `key` in this process has settled, so requests of one
 * client to one instance never race each other for the row; only other instances can.
 */
function afterEarlierConsumes<T>(key: string, task: () => Promise<T>): Promise<T> {
  // A one-time route's request counts inside its own transaction, which already orders it against
  // every other; waiting here for a consume that waits for this transaction's lock would never end.
  if (inOneTimeTransaction()) return task();
  const run = (consuming.get(key) ?? Promise.resolve()).then(task, task);
  const settled = run.then(
    () => undefined,
    () => undefined,
  );
  consuming.set(key, settled);
  void settled.then(() => {
    if (consuming.get(key) === settled) consuming.delete(key);
  });
  return run;
}

/**
 * The shared store: paths under one of `limitedPatterns` counted in the database through
 * `adapter` (rows past `prune.retainMs` deleted), every other path in `local`. An app whose schema
 * lacks the `rateLimit` table is counted in `local` instead, with an error logged once (README "Limits").
 */
export function databaseRateLimitStore(
  adapter: () => Promise<CountsAdapter>,
  limitedPatterns: readonly string[],
  local: RateLimitStore,
  prune: PruneOptions,
): RateLimitStore {
  const table = new CountsTable(adapter, prune);
  const sharedKey = (key: string): string | undefined => {
    const { client, path } = clientAndPath(key);
    const rule = ruleOf(path, limitedPatterns);
    return rule === undefined ? undefined : `${client}|${rule}`;
  };
  const orLocal = async <T>(run: () => Promise<T>, fallback: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      if (!isMissingTable(error)) throw error;
      if (!missingTableLogged) {
        missingTableLogged = true;
        logger.error(
          "rate limits counted per process: the schema has no rateLimit table (add it, or set AUTH_RATE_LIMIT_STORAGE=memory)",
          {},
        );
      }
      return fallback();
    }
  };
  return {
    async get(key) {
      const shared = sharedKey(key);
      if (shared === undefined) return local.get(key);
      return orLocal(
        async () => {
          const seen = await table.read(shared);
          const entry: SeenEntry | undefined = seen && { key, ...seen, [SEEN]: seen };
          return entry;
        },
        async () => local.get(key),
      );
    },
    async set(key, value) {
      const shared = sharedKey(key);
      if (shared === undefined) return local.set(key, value);
      const seen = (value as SeenEntry)[SEEN];
      const next = { count: value.count, lastRequest: value.lastRequest };
      await orLocal(
        async () => {
          const written = seen ? await table.replace(shared, seen, next) : await table.insert(shared, next);
          // Another instance wrote since this one read: count this request on top of its count.
          if (!written) await table.hit(shared, value.lastRequest);
        },
        async () => local.set(key, value),
      );
    },
    async consume(key, rule) {
      const shared = sharedKey(key);
      if (shared === undefined) return local.consume(key, rule);
      return afterEarlierConsumes(shared, () =>
        orLocal(
          async () => {
            for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
              const seen = await table.read(shared);
              const { next, verdict } = consumeStep(seen, rule, Date.now());
              if (!next) return verdict;
              // Another instance wrote since this one read: decide again on what it wrote.
              if (seen ? await table.replace(shared, seen, next) : await table.insert(shared, next))
                return verdict;
            }
            // Instances racing this hard for one client's row: refused rather than let through uncounted.
            logger.warn("rate limit count not written: too much contention on one key", {
              attempts: MAX_ATTEMPTS,
            });
            return { allowed: false, retryAfter: 1 };
          },
          async () => local.consume(key, rule),
        ),
      );
    },
  };
}
