/**
 * What a where is: Better Auth's clause shape (`CleanedWhere`), sortBy, the table shape the planner
 * reads, and the up-front check that turns malformed input into a typed error.
 */
import { AppError } from "service-auth/server";

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

/**
 * Case sensitivity of a clause's string comparisons (Better Auth 1.7's `Where.mode`; 1.4 never
 * sets it): `insensitive` folds case in eq, ne, in, not_in, contains, starts_with and ends_with.
 */
export type WhereMode = "sensitive" | "insensitive";

export const WHERE_MODES: readonly WhereMode[] = ["sensitive", "insensitive"];

/**
 * One clause, as Better Auth's adapter factory hands it over (operator, connector and mode default
 * to eq, AND and sensitive).
 */
export interface WhereClause {
  field: string;
  value: WhereValue;
  operator?: WhereOperator;
  connector?: "AND" | "OR";
  mode?: WhereMode;
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

/** A stored document as the where functions see it. */
export type Doc = Record<string, unknown> & { _id: string; _creationTime: number };

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

/** Checks operators, array values and field names up front, so bad input is a typed error, not a wrong answer. */
export function checkWhere(
  table: string,
  shape: TableShape,
  where: readonly WhereClause[] | undefined,
): void {
  for (const clause of where ?? []) {
    if (typeof clause?.field !== "string")
      throw new AppError("BAD_REQUEST", "where: every clause needs a field");
    const op = clause.operator ?? "eq";
    if (!WHERE_OPERATORS.includes(op)) throw new AppError("BAD_REQUEST", `where: unknown operator "${op}"`);
    if ((op === "in" || op === "not_in") && !Array.isArray(clause.value)) {
      throw new AppError("BAD_REQUEST", `where: "${op}" on "${clause.field}" needs an array value`);
    }
    if (clause.connector !== undefined && clause.connector !== "AND" && clause.connector !== "OR") {
      throw new AppError("BAD_REQUEST", `where: unknown connector "${String(clause.connector)}"`);
    }
    if (clause.mode !== undefined && !WHERE_MODES.includes(clause.mode)) {
      throw new AppError("BAD_REQUEST", `where: unknown mode "${String(clause.mode)}"`);
    }
    if (!isKnownField(shape, clause.field)) {
      throw new AppError("BAD_REQUEST", `where: "${table}" has no field "${clause.field}"`);
    }
  }
}

/** True for the table's declared fields and the system fields `_id` and `_creationTime`. */
export function isKnownField(shape: TableShape, field: string): boolean {
  return field === "_id" || field === "_creationTime" || Object.hasOwn(shape.fields, field);
}
