/**
 * The auth data operations (requirements §4.2), each written once: whether it runs as a query or a
 * mutation, the validator of its arguments, and what it does. Everything else that lists them is
 * derived from this table: the internal functions `createApi` makes (functions.ts), the references
 * the HTTP adapter calls and the operations both adapters run (adapter.ts), and their types. The
 * keys are the wire names (`auth:findOne`, …); adapter.ts maps Better Auth's methods onto them.
 */
import { type PropertyValidators, v } from "service-auth/values";
import { dbCount } from "./count.ts";
import { dbCreate } from "./create.ts";
import { dbConsumeOne, dbDeleteMany, dbDeleteOne } from "./delete.ts";
import { dbFindMany, dbFindOne } from "./find.ts";
import type { AnyCtx, DataConfig } from "./types.ts";
import { dbIncrementOne, dbUpdateMany, dbUpdateOne } from "./update.ts";
import { ARGS } from "./validators.ts";

export type OperationKind = "query" | "mutation";

/** One data operation. `run` gets the caller's ctx (a query ctx can only read). */
export interface DataOperation<K extends OperationKind = OperationKind, Args = any, Result = unknown> {
  readonly kind: K;
  /** Strict argument validators (`skipValidation` uses `LOOSE_ARGS` for every operation). */
  readonly args: PropertyValidators;
  readonly run: (ctx: AnyCtx, config: DataConfig, args: Args) => Promise<Result>;
}

function operation<K extends OperationKind, Args, Result>(
  kind: K,
  args: PropertyValidators,
  run: (ctx: AnyCtx, config: DataConfig, args: Args) => Promise<Result>,
): DataOperation<K, Args, Result> {
  return { kind, args, run };
}

const { model, data, select, where, sortBy, limit, offset, increment } = ARGS;

/** The table. Argument order in each validator is the order errors are found in. */
export const DATA_OPERATIONS = {
  create: operation("mutation", { model, data, select }, dbCreate),
  findOne: operation("query", { model, where, select }, dbFindOne),
  findMany: operation(
    "query",
    { model, where: v.optional(where), sortBy, limit, offset, select },
    dbFindMany,
  ),
  count: operation("query", { model, where: v.optional(where) }, dbCount),
  updateOne: operation("mutation", { model, where, update: data }, dbUpdateOne),
  updateMany: operation("mutation", { model, where, update: data }, dbUpdateMany),
  deleteOne: operation("mutation", { model, where }, dbDeleteOne),
  deleteMany: operation("mutation", { model, where }, dbDeleteMany),
  // Better Auth 1.7's race-safe primitives: each one transaction (adapter.ts).
  consumeOne: operation("mutation", { model, where }, dbConsumeOne),
  incrementOne: operation("mutation", { model, where, increment, set: v.optional(data) }, dbIncrementOne),
};

type Operations = typeof DATA_OPERATIONS;
export type OperationName = keyof Operations;
export type KindOf<N extends OperationName> = Operations[N]["kind"];
export type ArgsOf<N extends OperationName> = Parameters<Operations[N]["run"]>[2];
export type ResultOf<N extends OperationName> = Awaited<ReturnType<Operations[N]["run"]>>;

/** The operations' names, in the table's order. */
export const OPERATION_NAMES = Object.keys(DATA_OPERATIONS) as OperationName[];

/** Every operation as a function of its arguments alone. */
export type OperationCalls = { [N in OperationName]: (args: ArgsOf<N>) => Promise<ResultOf<N>> };

/**
 * Every operation run by `call`: directly with a ctx (the direct adapter), or as a function call
 * through `runQuery` / `runMutation` (the HTTP adapter).
 */
export function operationCalls(
  call: (name: OperationName, operation: DataOperation, args: unknown) => Promise<unknown>,
): OperationCalls {
  const calls: Record<string, (args: unknown) => Promise<unknown>> = {};
  for (const name of OPERATION_NAMES) calls[name] = (args) => call(name, DATA_OPERATIONS[name], args);
  return calls as OperationCalls;
}
