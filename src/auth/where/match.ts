/**
 * Whether a document satisfies a where, in memory. Semantics follow Better Auth's memory adapter:
 * clauses fold left, each joining the result so far with its own connector (`a, OR b, AND c` is
 * `(a || b) && c`); `null` means "no value", so `eq null` also matches a missing field; comparisons
 * (lt/gt/…) hold only between values of the same type, in the platform's index key order
 * (`compareValues`: strings by UTF-16 code unit), so the filter and an index range agree. A clause
 * in `insensitive` mode compares strings lower-cased, as Better Auth 1.7's memory adapter does,
 * except the ordering comparisons, which it leaves case-sensitive too.
 */
import { AppError, compareValues } from "service-auth/server";
import type { WhereClause } from "./clause.ts";

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

function asList(clause: WhereClause, value: unknown): unknown[] {
  if (!Array.isArray(value)) {
    throw new AppError(
      "BAD_REQUEST",
      `where: "${clause.operator}" on "${clause.field}" needs an array value`,
    );
  }
  return value;
}

/** Strings lower-cased (case folded for an insensitive clause); any other value as it is. */
const folded = (value: unknown): unknown => (typeof value === "string" ? value.toLowerCase() : value);

/** The clause with its value, and the stored value, case-folded when the clause is insensitive. */
function comparable(doc: Record<string, unknown>, clause: WhereClause): { stored: unknown; value: unknown } {
  const stored = doc[clause.field];
  if (clause.mode !== "insensitive") return { stored, value: clause.value };
  const value = Array.isArray(clause.value) ? clause.value.map(folded) : folded(clause.value);
  return { stored: folded(stored), value };
}

/** True when `doc` satisfies one clause. */
export function matchesClause(doc: Record<string, unknown>, clause: WhereClause): boolean {
  const operator = clause.operator ?? "eq";
  const ordering = operator === "lt" || operator === "lte" || operator === "gt" || operator === "gte";
  const { stored, value } = ordering
    ? { stored: doc[clause.field], value: clause.value }
    : comparable(doc, clause);
  switch (operator) {
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
      return asList(clause, value).some((v) => equals(stored, v));
    case "not_in":
      return !asList(clause, value).some((v) => equals(stored, v));
    case "contains":
      return typeof stored === "string" && typeof value === "string" && stored.includes(value);
    case "starts_with":
      return typeof stored === "string" && typeof value === "string" && stored.startsWith(value);
    case "ends_with":
      return typeof stored === "string" && typeof value === "string" && stored.endsWith(value);
    default:
      throw new AppError("BAD_REQUEST", `Unknown where operator "${String(operator)}"`);
  }
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
