/**
 * Whether a document satisfies a where, in memory. Semantics follow Better Auth's memory adapter:
 * clauses fold left, each joining the result so far with its own connector (`a, OR b, AND c` is
 * `(a || b) && c`); `null` means "no value", so `eq null` also matches a missing field; comparisons
 * (lt/gt/…) hold only between values of the same type, in the platform's index key order
 * (`compareValues`: strings by UTF-16 code unit), so the filter and an index range agree.
 */
import { compareValues, ServiceError } from "service-auth/server";
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

function asList(clause: WhereClause): unknown[] {
  if (!Array.isArray(clause.value)) {
    throw new ServiceError(
      "BAD_REQUEST",
      `where: "${clause.operator}" on "${clause.field}" needs an array value`,
    );
  }
  return clause.value;
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
