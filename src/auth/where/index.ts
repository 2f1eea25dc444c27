/**
 * Better Auth where-clauses (`CleanedWhere[]`), sortBy, limit and offset answered with index reads.
 * One job per module: `where/clause.ts` (shapes and input checks), `where/match.ts` (in-memory
 * semantics), `where/plan.ts` (which index ranges to read), `where/execute.ts` (reading, windowing,
 * counting). The in-memory matcher and sorter use the platform's `compareValues`, the order of the
 * index keys, so a where answers the same whether an index range or the filter decides it.
 */
export {
  checkWhere,
  isKnownField,
  type SortBy,
  type TableShape,
  WHERE_MODES,
  WHERE_OPERATORS,
  type WhereClause,
  type WhereMode,
  type WhereOperator,
  type WhereValue,
} from "./clause.ts";
export { countDocs, type FindOptions, findDocs, findFirst } from "./execute.ts";
export { matchesClause, matchesWhere } from "./match.ts";
export { type IndexRange, type Plan, planWhere, type Source } from "./plan.ts";
