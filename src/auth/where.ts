/**
 * Better Auth where-clauses (`CleanedWhere[]`), sortBy, limit and offset turned into index reads.
 *
 * Semantics follow Better Auth's memory adapter: clauses fold left, each clause joining the result
 * so far with its own connector (`a, OR b, AND c` is `(a || b) && c`). `null` means "no value": `eq null`
 * also matches a missing field. Comparisons (lt/gt/…) hold only between values of the same type,
 * and strings compare by code point, which is exactly the order of the platform's index keys.
 *
 * The plan picks, among the clauses that must all hold, the one an index answers best (`_id` →
 * `db.get`, then eq prefixes of an index with an optional in/range on the next field); an OR whose
 * every branch has an index becomes one index read per branch, merged by id. The whole where is
 * still applied to each document read, so an index only ever narrows what is read.
 */
import { type DatabaseReader, ServiceError } from "service-auth/server";

export type WhereOperator =
  | "eq"
  | "ne"
  | "lt"
  | "lte"
  | "gt"
  | "gte"
  | "in"
  | "not_in"
  | "contains"
  | "starts_with"
  | "ends_with";

export type WhereValue = string | number | boolean | null | string[] | number[];

/** One clause, as Better Auth's adapter factory hands it over (operator and connector default to eq/AND). */
export interface WhereClause {
  field: string;
  value: WhereValue;
  operator?: WhereOperator;
  connector?: "AND" | "OR";
}

export interface SortBy {
  field: string;
  direction: "asc" | "desc";
}

/** The parts of a table definition the planner needs. */
export interface TableShape {
  fields: Record<string, unknown>;
  indexes: { name: string; fields: string[] }[];
}

type Doc = Record<string, unknown> & { _id: string; _creationTime: number };

export const WHERE_OPERATORS: readonly WhereOperator[] = [
  "eq",
  "ne",
  "lt",
  "lte",
  "gt",
  "gte",
  "in",
  "not_in",
  "contains",
  "starts_with",
  "ends_with",
];

// ------------------------------------------------------------------------------------ matching

/** Code point order, the order of index keys (UTF-8 bytes); plain `<` uses UTF-16 units. */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length - b.length < 0 ? -1 : 1;
}

function typeRank(value: unknown): number {
  if (value === undefined) return 0;
  if (value === null) return 1;
  switch (typeof value) {
    case "number":
      return 2;
    case "boolean":
      return 3;
    case "string":
      return 4;
    default:
      return Array.isArray(value) ? 5 : 6;
  }
}

/** Total order of stored values, the same as the platform's index order (missing < null < numbers < booleans < strings). */
export function compareValues(a: unknown, b: unknown): number {
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === "number") return a < (b as number) ? -1 : a > (b as number) ? 1 : 0;
  if (typeof a === "boolean") return a === b ? 0 : a ? 1 : -1;
  if (typeof a === "string") return compareStrings(a, b as string);
  return compareStrings(JSON.stringify(a), JSON.stringify(b));
}

const isNil = (v: unknown) => v === null || v === undefined;

function equals(stored: unknown, wanted: unknown): boolean {
  return isNil(wanted) ? isNil(stored) : stored === wanted;
}

/** Same-type comparison; anything else (a missing field, a number against a string) is false. */
function ordered(stored: unknown, wanted: unknown, test: (c: number) => boolean): boolean {
  if (isNil(stored) || isNil(wanted) || typeof stored !== typeof wanted) return false;
  if (typeof stored !== "number" && typeof stored !== "string" && typeof stored !== "boolean") return false;
  return test(compareValues(stored, wanted));
}

/** True when `doc` satisfies one clause. */
export function matchesClause(doc: Record<string, unknown>, clause: WhereClause): boolean {
  const stored = doc[clause.field];
  const value = clause.value;
  switch (clause.operator ?? "eq") {
    case "eq":
      return equals(stored, value);
    case "ne":
      return !equals(stored, value);
    case "lt":
      return ordered(stored, value, (c) => c < 0);
    case "lte":
      return ordered(stored, value, (c) => c <= 0);
    case "gt":
      return ordered(stored, value, (c) => c > 0);
    case "gte":
      return ordered(stored, value, (c) => c >= 0);
    case "in":
      return asList(clause).some((v) => equals(stored, v));
    case "not_in":
      return !asList(clause).some((v) => equals(stored, v));
    case "contains":
      return typeof stored === "string" && typeof value === "string" && stored.includes(value);
    case "starts_with":
      return typeof stored === "string" && typeof value === "string" && stored.startsWith(value);
    case "ends_with":
      return typeof stored === "string" && typeof value === "string" && stored.endsWith(value);
    default:
      throw new ServiceError("BAD_REQUEST", `Unknown where operator "${String(clause.operator)}"`);
  }
}

function asList(clause: WhereClause): unknown[] {
  if (!Array.isArray(clause.value)) {
    throw new ServiceError(
      "BAD_REQUEST",
      `where: "${clause.operator}" on "${clause.field}" needs an array value`,
    );
  }
  return clause.value;
}

/** True when `doc` satisfies the whole where (left fold of the connectors; empty matches all). */
export function matchesWhere(
  doc: Record<string, unknown>,
  where: readonly WhereClause[] | undefined,
): boolean {
  if (!where || where.length === 0) return true;
  let result = matchesClause(doc, where[0]);
  for (let i = 1; i < where.length; i++) {
    const clause = where[i];
    if (clause.connector === "OR") result = result || matchesClause(doc, clause);
    else result = result && matchesClause(doc, clause);
  }
  return result;
}

/** Checks operators, array values and field names up front, so bad input is a typed error, not a wrong answer. */
export function checkWhere(
  table: string,
  shape: TableShape,
  where: readonly WhereClause[] | undefined,
): void {
  for (const clause of where ?? []) {
    if (typeof clause?.field !== "string")
      throw new ServiceError("BAD_REQUEST", "where: every clause needs a field");
    const op = clause.operator ?? "eq";
    if (!WHERE_OPERATORS.includes(op))
      throw new ServiceError("BAD_REQUEST", `where: unknown operator "${op}"`);
    if ((op === "in" || op === "not_in") && !Array.isArray(clause.value)) {
      throw new ServiceError("BAD_REQUEST", `where: "${op}" on "${clause.field}" needs an array value`);
    }
    if (clause.connector !== undefined && clause.connector !== "AND" && clause.connector !== "OR") {
      throw new ServiceError("BAD_REQUEST", `where: unknown connector "${String(clause.connector)}"`);
    }
    if (!isKnownField(shape, clause.field)) {
      throw new ServiceError("BAD_REQUEST", `where: "${table}" has no field "${clause.field}"`);
    }
  }
}

export function isKnownField(shape: TableShape, field: string): boolean {
  return field === "_id" || field === "_creationTime" || Object.hasOwn(shape.fields, field);
}

// ------------------------------------------------------------------------------------ planning

type Expr = { kind: "leaf"; clause: WhereClause } | { kind: "and" | "or"; items: Expr[] };

/** The left fold as a tree, with nested ANDs/ORs flattened. */
function toExpr(where: readonly WhereClause[]): Expr {
  let expr: Expr = { kind: "leaf", clause: where[0] };
  for (let i = 1; i < where.length; i++) {
    const kind = where[i].connector === "OR" ? "or" : "and";
    const leaf: Expr = { kind: "leaf", clause: where[i] };
    expr = expr.kind === kind ? { kind, items: [...expr.items, leaf] } : { kind, items: [expr, leaf] };
  }
  return expr;
}

/** A bound of an index range; `value` is compared with the index field. */
interface Bound {
  value: unknown;
  inclusive: boolean;
}

/** One contiguous range of an index: equality on a prefix of its fields, then bounds on the next. */
export interface IndexRange {
  eq: unknown[];
  lower?: Bound;
  upper?: Bound;
}

/** How to find candidate documents. */
export type Source =
  | { kind: "ids"; ids: string[] }
  | { kind: "index"; index: string; fields: string[]; ranges: IndexRange[] };

export interface Plan {
  /** Candidate sources; several sources are merged by id. Empty: nothing can match. */
  sources: Source[];
  /** True when every candidate is a match and no two sources overlap, so index counts are the answer. */
  exact: boolean;
  /** Set when the single source returns documents already in sortBy order. */
  sorted?: boolean;
}

/** The platform's creation-time index, usable for `_creationTime` clauses like any declared index. */
const CREATION_INDEX = { name: "by_creation_time", fields: ["_creationTime"] };
const FULL_SCAN: Source = {
  kind: "index",
  index: "by_creation_time",
  fields: ["_creationTime", "_id"],
  ranges: [{ eq: [] }],
};

/** Values a clause pins its field to (null stands for null and missing), or null when it does not. */
function pinnedValues(clause: WhereClause): unknown[] | null {
  const op = clause.operator ?? "eq";
  const raw = op === "eq" ? [clause.value] : op === "in" && Array.isArray(clause.value) ? clause.value : null;
  if (!raw) return null;
  const out: unknown[] = [];
  for (const v of raw) {
    if (v === null || v === undefined) out.push(undefined, null);
    else if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") out.push(v);
    else return null;
  }
  // Duplicates would read (and count) a range twice.
  return [...new Map(out.map((v) => [`${typeof v}:${String(v)}`, v])).values()];
}

/**
 * The range a comparison clause covers, bounded to values of its own type so the range holds
 * exactly the matches (index order puts numbers before booleans, strings before arrays).
 */
function comparisonBounds(clause: WhereClause): { lower?: Bound; upper?: Bound } | null {
  const op = clause.operator ?? "eq";
  const v = clause.value;
  const typed =
    typeof v === "number" && !Number.isNaN(v)
      ? { min: Number.NEGATIVE_INFINITY, minInclusive: true, max: false as unknown }
      : typeof v === "string"
        ? { min: "", minInclusive: true, max: [] as unknown }
        : null;
  if (!typed) return null;
  switch (op) {
    case "gt":
    case "gte":
      return { lower: { value: v, inclusive: op === "gte" }, upper: { value: typed.max, inclusive: false } };
    case "lt":
    case "lte":
      return { lower: { value: typed.min, inclusive: true }, upper: { value: v, inclusive: op === "lte" } };
    default:
      return null;
  }
}

interface Candidate {
  source: Source;
  /** Leaves of the conjunction the source answers exactly. */
  consumed: Set<WhereClause>;
  score: number;
  /** The index field right after the equality prefix (reads come out ordered by it). */
  nextField?: string;
}

/** The best index read for a conjunction of leaves, or null when no leaf can use an index. */
function planConjunction(shape: TableShape, leaves: WhereClause[], sortBy?: SortBy): Candidate | null {
  // `_id` lookups are the cheapest reads there are.
  for (const leaf of leaves) {
    if (leaf.field !== "_id") continue;
    const values = pinnedValues(leaf);
    if (values) {
      const ids = values.filter((v): v is string => typeof v === "string");
      return { source: { kind: "ids", ids }, consumed: new Set([leaf]), score: 1000 };
    }
  }
  let best: Candidate | null = null;
  for (const index of [...shape.indexes, CREATION_INDEX]) {
    const eq: unknown[] = [];
    const consumed = new Set<WhereClause>();
    let score = 0;
    let i = 0;
    for (; i < index.fields.length; i++) {
      const leaf = leaves.find((l) => l.field === index.fields[i] && pinnedValues(l)?.length === 1);
      if (!leaf) break;
      eq.push(pinnedValues(leaf)![0]);
      consumed.add(leaf);
      score += 10;
    }
    let ranges: IndexRange[] = [{ eq }];
    const next = index.fields[i];
    if (next !== undefined) {
      const multi = leaves.find((l) => l.field === next && (pinnedValues(l)?.length ?? 0) > 1);
      const isLower = (l: WhereClause) => l.operator === "gt" || l.operator === "gte";
      const isUpper = (l: WhereClause) => l.operator === "lt" || l.operator === "lte";
      const lower = leaves.find((l) => l.field === next && isLower(l) && comparisonBounds(l) !== null);
      let upper = leaves.find((l) => l.field === next && isUpper(l) && comparisonBounds(l) !== null);
      // Bounds of two types select nothing together; use one and leave the other to the filter.
      if (lower && upper && typeof lower.value !== typeof upper.value) upper = undefined;
      if (multi) {
        ranges = pinnedValues(multi)!.map((v) => ({ eq: [...eq, v] }));
        consumed.add(multi);
        score += 5;
      } else if (lower || upper) {
        const lb = lower ? comparisonBounds(lower)! : undefined;
        const ub = upper ? comparisonBounds(upper)! : undefined;
        ranges = [{ eq, lower: (lb ?? ub)!.lower, upper: (ub ?? lb)!.upper }];
        if (lower) consumed.add(lower);
        if (upper) consumed.add(upper);
        score += 3;
      }
    }
    if (score === 0) continue;
    // Prefer the index that also yields the requested order.
    if (sortBy && next === sortBy.field && ranges.length === 1) score += 1;
    if (!best || score > best.score) {
      best = {
        source: { kind: "index", index: index.name, fields: index.fields, ranges },
        consumed,
        score,
        nextField: next,
      };
    }
  }
  return best;
}

/** A plan for the whole where. */
function planExpr(
  shape: TableShape,
  expr: Expr,
  sortBy?: SortBy,
): { sources: Source[]; exact: boolean; nextField?: string } | null {
  if (expr.kind === "leaf" || expr.kind === "and") {
    const items = expr.kind === "leaf" ? [expr] : expr.items;
    const leaves = items.flatMap((e) => (e.kind === "leaf" ? [e.clause] : []));
    const candidate = planConjunction(shape, leaves, sortBy);
    if (candidate) {
      const exact = candidate.consumed.size === items.length && candidate.source.kind === "index";
      return { sources: [candidate.source], exact, nextField: candidate.nextField };
    }
    // No leaf has an index: an OR inside the AND may still have one per branch.
    for (const e of items) {
      if (e.kind === "or") {
        const sub = planExpr(shape, e);
        if (sub) return { sources: sub.sources, exact: false };
      }
    }
    return null;
  }
  const sources: Source[] = [];
  for (const branch of expr.items) {
    const sub = planExpr(shape, branch);
    if (!sub) return null; // one unindexed branch means reading everything anyway
    sources.push(...sub.sources);
  }
  return { sources, exact: false };
}

/** Chooses how to read the documents matching `where`, in `sortBy` order when an index gives it. */
export function planWhere(
  shape: TableShape,
  where: readonly WhereClause[] | undefined,
  sortBy?: SortBy,
): Plan {
  if (!where || where.length === 0) {
    if (sortBy) {
      const index = shape.indexes.find((i) => i.fields[0] === sortBy.field);
      if (index)
        return {
          sources: [{ kind: "index", index: index.name, fields: index.fields, ranges: [{ eq: [] }] }],
          exact: true,
          sorted: true,
        };
      if (sortBy.field === "_creationTime") return { sources: [FULL_SCAN], exact: true, sorted: true };
    }
    return { sources: [FULL_SCAN], exact: true, sorted: !sortBy };
  }
  const planned = planExpr(shape, toExpr(where), sortBy);
  if (!planned) {
    // Nothing narrows the read; scanning in sortBy order at least lets it stop at offset + limit.
    const index = sortBy && shape.indexes.find((i) => i.fields[0] === sortBy.field);
    if (index)
      return {
        sources: [{ kind: "index", index: index.name, fields: index.fields, ranges: [{ eq: [] }] }],
        exact: false,
        sorted: true,
      };
    return { sources: [FULL_SCAN], exact: false, sorted: !sortBy || sortBy.field === "_creationTime" };
  }
  const single =
    planned.sources.length === 1 &&
    planned.sources[0].kind === "index" &&
    planned.sources[0].ranges.length === 1;
  return {
    sources: planned.sources,
    exact: planned.exact,
    sorted: single && (!sortBy || planned.nextField === sortBy.field),
  };
}

// ------------------------------------------------------------------------------------ execution

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
    throw new ServiceError("BAD_REQUEST", "offset must be a non-negative integer");
  if (limit !== Number.POSITIVE_INFINITY && (!Number.isInteger(limit) || limit < 0)) {
    throw new ServiceError("BAD_REQUEST", "limit must be a non-negative integer");
  }
  return { offset, limit };
}

/** Sorts like an index on `field` would (ties by creation time, then id). */
function sortDocs(docs: Doc[], sortBy: SortBy): Doc[] {
  const sign = sortBy.direction === "desc" ? -1 : 1;
  return docs.sort(
    (a, b) =>
      sign *
      (compareValues(a[sortBy.field], b[sortBy.field]) ||
        a._creationTime - b._creationTime ||
        compareStrings(a._id, b._id)),
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
    throw new ServiceError("BAD_REQUEST", `sortBy: "${table}" has no field "${options.sortBy.field}"`);
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
