/**
 * Runs a plan: reads its index ranges or ids, filters with the where unless the plan is exact,
 * merges several sources by id, sorts in memory in index key order when no index gave the order,
 * and applies offset/limit, reading no more rows than needed. Counts use index entries when exact.
 */
import { AppError, compareValues, type DatabaseReader } from "service-auth/server";
import {
  checkWhere,
  type Doc,
  isKnownField,
  type SortBy,
  type TableShape,
  type WhereClause,
} from "./clause.ts";
import { matchesWhere } from "./match.ts";
import { type IndexRange, planWhere, type Source } from "./plan.ts";

/** The `withIndex` range callback for one planned range. */
function rangeBuilder(fields: string[], range: IndexRange) {
  return (q: any) => {
    for (let i = 0; i < range.eq.length; i++) q.eq(fields[i], range.eq[i]);
    const field = fields[range.eq.length];
    if (range.lower) q[range.lower.inclusive ? "gte" : "gt"](field, range.lower.value);
    if (range.upper) q[range.upper.inclusive ? "lte" : "lt"](field, range.upper.value);
    return q;
  };
}

export interface FindOptions {
  where?: readonly WhereClause[];
  sortBy?: SortBy;
  limit?: number;
  offset?: number;
}

function checkWindow(options: FindOptions): { offset: number; limit: number } {
  const offset = options.offset ?? 0;
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  if (!Number.isInteger(offset) || offset < 0)
    throw new AppError("BAD_REQUEST", "offset must be a non-negative integer");
  if (limit !== Number.POSITIVE_INFINITY && (!Number.isInteger(limit) || limit < 0)) {
    throw new AppError("BAD_REQUEST", "limit must be a non-negative integer");
  }
  return { offset, limit };
}

/** Sorts like an index on `field` would, in index key order (ties by creation time, then id). */
function sortDocs(docs: Doc[], sortBy: SortBy): Doc[] {
  const sign = sortBy.direction === "desc" ? -1 : 1;
  return docs.sort(
    (a, b) =>
      sign *
      (compareValues(a[sortBy.field], b[sortBy.field]) ||
        a._creationTime - b._creationTime ||
        compareValues(a._id, b._id)),
  );
}

/** Reads up to `max` matching documents of one source (every one when `max` is infinite). */
async function readSource(
  db: DatabaseReader<any>,
  table: string,
  source: Source,
  where: readonly WhereClause[] | undefined,
  max: number,
  order: "asc" | "desc",
  exact: boolean,
): Promise<Doc[]> {
  const match = (doc: Doc) => matchesWhere(doc, where);
  if (source.kind === "ids") {
    const out: Doc[] = [];
    for (const id of source.ids) {
      if (out.length >= max) break;
      const doc = (await db.get(table, id)) as Doc | null;
      if (doc && match(doc)) out.push(doc);
    }
    return out;
  }
  const out: Doc[] = [];
  for (const range of source.ranges) {
    if (out.length >= max) break;
    let query = db
      .query(table)
      .withIndex(source.index as any, rangeBuilder(source.fields, range))
      .order(order);
    // When the ranges are exactly the matches, no filter: the read then stops at exactly `max` rows.
    if (where?.length && !exact) query = query.filter(match as any);
    const left = max - out.length;
    out.push(
      ...((left === Number.POSITIVE_INFINITY ? await query.collect() : await query.take(left)) as Doc[]),
    );
  }
  return out;
}

/** The matching documents of `table`, sorted, windowed by offset/limit; reads no more rows than the plan needs. */
export async function findDocs(
  db: DatabaseReader<any>,
  table: string,
  shape: TableShape,
  options: FindOptions,
): Promise<Doc[]> {
  const { offset, limit } = checkWindow(options);
  if (limit === 0) return [];
  checkWhere(table, shape, options.where);
  if (options.sortBy && !isKnownField(shape, options.sortBy.field)) {
    throw new AppError("BAD_REQUEST", `sortBy: "${table}" has no field "${options.sortBy.field}"`);
  }
  const plan = planWhere(shape, options.where, options.sortBy);
  const wanted = offset + limit;
  if (plan.sorted) {
    // One index read already in the requested order: stop after offset + limit matches.
    const docs = await readSource(
      db,
      table,
      plan.sources[0],
      options.where,
      wanted,
      options.sortBy?.direction ?? "asc",
      plan.exact,
    );
    return docs.slice(offset, wanted);
  }
  // Unordered or merged reads: every match is needed before sorting; without sortBy any window will do.
  const max = options.sortBy ? Number.POSITIVE_INFINITY : wanted;
  const byId = new Map<string, Doc>();
  for (const source of plan.sources) {
    if (byId.size >= max) break;
    // Each source reads up to `max` itself: its first rows may be duplicates of an earlier source's.
    for (const doc of await readSource(db, table, source, options.where, max, "asc", plan.exact))
      byId.set(doc._id, doc);
  }
  let docs = [...byId.values()];
  if (options.sortBy) docs = sortDocs(docs, options.sortBy);
  else if (plan.sources.length > 1) docs.sort((a, b) => a._creationTime - b._creationTime);
  return docs.slice(offset, wanted);
}

/** The first matching document, or null. */
export async function findFirst(
  db: DatabaseReader<any>,
  table: string,
  shape: TableShape,
  where: readonly WhereClause[] | undefined,
): Promise<Doc | null> {
  return (await findDocs(db, table, shape, { where, limit: 1 }))[0] ?? null;
}

/**
 * The number of matching documents. When the plan's index ranges are exactly the matches, it
 * counts index entries (`query.count()`, no documents loaded); otherwise it reads the candidates.
 */
export async function countDocs(
  db: DatabaseReader<any>,
  table: string,
  shape: TableShape,
  where: readonly WhereClause[] | undefined,
): Promise<number> {
  checkWhere(table, shape, where);
  const plan = planWhere(shape, where);
  if (plan.exact) {
    let total = 0;
    for (const source of plan.sources) {
      if (source.kind !== "index") continue;
      for (const range of source.ranges) {
        total += await db
          .query(table)
          .withIndex(source.index as any, rangeBuilder(source.fields, range))
          .count();
      }
    }
    return total;
  }
  return (await findDocs(db, table, shape, { where })).length;
}
