/**
 * Chooses how to read the documents a where can match. Among the clauses that must all hold it
 * picks the one an index answers best (`_id` → `db.get`, then equality on a prefix of an index's
 * fields with an optional `in` or range on the next field); an OR whose every branch has an index
 * becomes one index read per branch, merged by id. A plan only narrows what is read: execution
 * still applies the whole where to each document unless the plan is exact.
 */
import type { SortBy, TableShape, WhereClause } from "./clause.ts";

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

/**
 * Values a clause pins its field to (null stands for null and missing), or null when it does not.
 * A case-insensitive string pins nothing: the index holds the stored case.
 */
function pinnedValues(clause: WhereClause): unknown[] | null {
  const op = clause.operator ?? "eq";
  const raw = op === "eq" ? [clause.value] : op === "in" && Array.isArray(clause.value) ? clause.value : null;
  if (!raw) return null;
  const out: unknown[] = [];
  for (const v of raw) {
    if (v === null || v === undefined) out.push(undefined, null);
    else if (typeof v === "string" && clause.mode === "insensitive") return null;
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
      ? { min: Number.NEGATIVE_INFINITY, max: false as unknown }
      : typeof v === "string"
        ? { min: "", max: [] as unknown }
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
