/**
 * `db.query(table)`: index range reads with order, filter, take/first/unique/collect and cursor
 * pagination. Rows stream from the engine in batches, so `first()` or `take(n)` reads only what
 * it returns (plus filtered-out rows), and the recorded read range ends at the last row read.
 */
import { AppError } from "../errors.ts";
import type { Awaitable, ReadTransaction, StoredDocument } from "../storage/engine.ts";
import { encodeKey, type KeyRange, prefixEnd } from "../storage/indexes/key.ts";
import type { TableInfo } from "./catalog.ts";
import { type RangeRead, readRange } from "./range-scan.ts";
import type { ReadSet } from "./read-write-sets.ts";

type Op = { kind: "eq" | "gt" | "gte" | "lt" | "lte"; field: string; value: unknown };

/**
 * Builds an index range: `eq` on a prefix of the index fields, then at most one lower and one upper bound.
 *
 * @example
 * ```ts
 * // The callback of `withIndex` receives an IndexRangeBuilder: `eq` on a prefix of the
 * // index fields, then at most one lower and one upper bound.
 * const profile = await ctx.db
 *   .query("profiles")
 *   .withIndex("userId", (q) => q.eq("userId", userId))
 *   .unique();
 * ```
 */
export class IndexRangeBuilder<Doc = any, Fields extends string = string> {
  /** @internal */ readonly ops: Op[] = [];
  eq<F extends Fields>(field: F, value: F extends keyof Doc ? Doc[F] : unknown): this {
    this.ops.push({ kind: "eq", field, value });
    return this;
  }
  gt<F extends Fields>(field: F, value: F extends keyof Doc ? Doc[F] : unknown): this {
    this.ops.push({ kind: "gt", field, value });
    return this;
  }
  gte<F extends Fields>(field: F, value: F extends keyof Doc ? Doc[F] : unknown): this {
    this.ops.push({ kind: "gte", field, value });
    return this;
  }
  lt<F extends Fields>(field: F, value: F extends keyof Doc ? Doc[F] : unknown): this {
    this.ops.push({ kind: "lt", field, value });
    return this;
  }
  lte<F extends Fields>(field: F, value: F extends keyof Doc ? Doc[F] : unknown): this {
    this.ops.push({ kind: "lte", field, value });
    return this;
  }
}

/** Turns range operations into a byte range of the index; rejects ops out of index order. */
export function compileRange(indexName: string, fields: string[], ops: Op[]): KeyRange {
  const prefix: unknown[] = [];
  let i = 0;
  while (i < ops.length && ops[i].kind === "eq") {
    const op = ops[i];
    if (fields[prefix.length] !== op.field) {
      throw new AppError(
        "BAD_REQUEST",
        `withIndex("${indexName}"): eq("${op.field}") must name field "${fields[prefix.length] ?? "(none)"}" (index fields: ${fields.join(", ")})`,
      );
    }
    prefix.push(op.value);
    i++;
  }
  const prefixKey = encodeKey(prefix);
  let lower: Buffer | undefined = prefix.length ? prefixKey : undefined;
  let upper: Buffer | undefined = prefix.length ? prefixEnd(prefixKey) : undefined;
  const boundField = fields[prefix.length];
  let sawLower = false;
  let sawUpper = false;
  for (; i < ops.length; i++) {
    const op = ops[i];
    if (op.kind === "eq" || op.field !== boundField) {
      throw new AppError(
        "BAD_REQUEST",
        `withIndex("${indexName}"): ${op.kind}("${op.field}") is out of index order (expected a bound on "${boundField}")`,
      );
    }
    const key = encodeKey([...prefix, op.value]);
    if (op.kind === "gt" || op.kind === "gte") {
      if (sawLower) throw new AppError("BAD_REQUEST", `withIndex("${indexName}"): two lower bounds`);
      sawLower = true;
      lower = op.kind === "gte" ? key : prefixEnd(key);
    } else {
      if (sawUpper) throw new AppError("BAD_REQUEST", `withIndex("${indexName}"): two upper bounds`);
      sawUpper = true;
      upper = op.kind === "lt" ? key : prefixEnd(key);
    }
  }
  return { lower, upper };
}

/**
 * Options of `Query.paginate`: how many documents a page holds, and where it starts (`null`
 * for the first page, else the previous page's `continueCursor`).
 *
 * @example
 * ```ts
 * import { type PaginationOptions, v } from "service-auth/server";
 *
 * export const page = query({
 *   args: { numItems: v.number(), cursor: v.union(v.string(), v.null()) },
 *   handler: async (ctx, args) => {
 *     const options: PaginationOptions = { numItems: args.numItems, cursor: args.cursor };
 *     return ctx.db.query("messages").order("desc").paginate(options);
 *   },
 * });
 * ```
 */
export interface PaginationOptions {
  numItems: number;
  cursor: string | null;
}
/**
 * One page of `Query.paginate`: its documents, whether it is the last one, and the cursor that
 * starts the next.
 *
 * @example
 * ```ts
 * import type { PaginationResult } from "service-auth/server";
 *
 * async function everyPage<T>(read: (cursor: string | null) => Promise<PaginationResult<T>>): Promise<T[]> {
 *   const all: T[] = [];
 *   let cursor: string | null = null;
 *   for (;;) {
 *     const { page, isDone, continueCursor } = await read(cursor);
 *     all.push(...page);
 *     if (isDone) return all;
 *     cursor = continueCursor;
 *   }
 * }
 * ```
 */
export interface PaginationResult<T> {
  page: T[];
  isDone: boolean;
  continueCursor: string;
}

/**
 * A query over one table; chain `withIndex`, `order`, `filter`, then read it.
 *
 * @example
 * ```ts
 * const newest = await ctx.db.query("messages").order("desc").take(50);
 * const counter = await ctx.db
 *   .query("counters")
 *   .withIndex("name", (q) => q.eq("name", "users"))
 *   .unique();
 * const long = await ctx.db.query("messages").filter((m) => m.body.length > 100).collect();
 * ```
 */
export class Query<
  Doc extends StoredDocument = StoredDocument,
  Indexes extends Record<string, string[]> = Record<string, string[]>,
> {
  private indexName = "by_creation_time";
  private range: KeyRange = {};
  private direction: "asc" | "desc" = "asc";
  private readonly predicates: ((doc: Doc) => boolean)[] = [];

  constructor(
    private readonly tx: ReadTransaction,
    private readonly table: TableInfo,
    private readonly readSet: ReadSet,
  ) {}

  /** Reads the index `name` within the range built by `range` (all of it when omitted). */
  withIndex<N extends keyof Indexes & string>(
    name: N,
    range?: (q: IndexRangeBuilder<Doc, Indexes[N][number]>) => IndexRangeBuilder<Doc, any>,
  ): this {
    const fields = this.table.indexes.get(name);
    if (!fields) throw new AppError("BAD_REQUEST", `Table "${this.table.name}" has no index "${name}"`);
    this.indexName = name;
    const builder = new IndexRangeBuilder<Doc, any>();
    if (range) range(builder);
    this.range = compileRange(name, fields, builder.ops);
    return this;
  }

  order(direction: "asc" | "desc"): this {
    this.direction = direction;
    return this;
  }

  /** Keeps documents for which `predicate` is true (evaluated after the index range). */
  filter(predicate: (doc: Doc) => boolean): this {
    this.predicates.push(predicate);
    return this;
  }

  /**
   * Reads up to `limit` matching documents starting after `after` (a key), recording the range
   * actually covered (`range-scan.ts`); a promise only when the engine's scans are.
   */
  private run(limit: number, after?: Buffer, keys = true): Awaitable<RangeRead<Doc>> {
    const { predicates } = this;
    return readRange<Doc>(this.tx, this.readSet, {
      table: this.table.name,
      index: this.indexName,
      range: this.range,
      order: this.direction,
      matches: predicates.length === 0 ? undefined : (doc) => predicates.every((p) => p(doc)),
      limit,
      after,
      keys,
    });
  }

  // The methods below await the read only when it is a promise: `await` on a value costs a
  // promise turn too, and SQLite's reads are values.

  async collect(): Promise<Doc[]> {
    const read = this.run(Number.POSITIVE_INFINITY);
    return (read instanceof Promise ? await read : read).docs;
  }

  async take(n: number): Promise<Doc[]> {
    if (!Number.isInteger(n) || n < 0)
      throw new AppError("BAD_REQUEST", "take(n) needs a non-negative integer");
    if (n === 0) return [];
    const read = this.run(n);
    return (read instanceof Promise ? await read : read).docs;
  }

  async first(): Promise<Doc | null> {
    const read = this.run(1);
    return (read instanceof Promise ? await read : read).docs[0] ?? null;
  }

  /** The only matching document or null; throws when there are two or more. */
  async unique(): Promise<Doc | null> {
    // Usually at most one row: the range ends within the batch and no key is needed.
    const read = this.run(2, undefined, false);
    const { docs } = read instanceof Promise ? await read : read;
    if (docs.length > 1) {
      throw new AppError(
        "CONFLICT",
        `unique() found more than one document in "${this.table.name}" (index "${this.indexName}")`,
      );
    }
    return docs[0] ?? null;
  }

  /** Counts documents in the index range without loading them (filters are not allowed). */
  async count(): Promise<number> {
    if (this.predicates.length) return (await this.collect()).length;
    this.readSet.ranges.push({ table: this.table.name, index: this.indexName, range: this.range });
    return this.tx.count(this.table.name, this.indexName, this.range);
  }

  async paginate(options: PaginationOptions): Promise<PaginationResult<Doc>> {
    if (!Number.isInteger(options.numItems) || options.numItems < 1) {
      throw new AppError("BAD_REQUEST", "paginate: numItems must be a positive integer");
    }
    let after: Buffer | undefined;
    if (options.cursor) {
      after = Buffer.from(options.cursor, "base64url");
      if (after.length === 0) throw new AppError("BAD_REQUEST", "paginate: malformed cursor");
    }
    const read = this.run(options.numItems, after);
    const { docs, lastKey, done } = read instanceof Promise ? await read : read;
    const cursorKey = lastKey ?? after;
    return {
      page: docs,
      isDone: done,
      continueCursor: cursorKey ? cursorKey.toString("base64url") : "",
    };
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Doc> {
    for (const doc of await this.collect()) yield doc;
  }
}
