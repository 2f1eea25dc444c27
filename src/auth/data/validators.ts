/**
 * Argument validators of the internal data functions: loose ones (`skipValidation`), or the
 * strict ones (put together per operation in operations.ts) plus a check of `data` / `update`
 * against exactly the named model's fields.
 */
import { AppError, ValidationError } from "service-auth/server";
import { type PropertyValidators, type Validator, v, validate } from "service-auth/values";
import { type TableShape, WHERE_MODES, WHERE_OPERATORS } from "../where/index.ts";
import { acceptsNull } from "./documents.ts";
import { shapeOf } from "./models.ts";
import type { DataConfig } from "./types.ts";

const whereValue = v.union(
  v.string(),
  v.number(),
  v.boolean(),
  v.null(),
  v.array(v.string()),
  v.array(v.number()),
);
const whereClause = v.object({
  field: v.string(),
  value: whereValue,
  operator: v.optional(v.union(...WHERE_OPERATORS.map((op) => v.literal(op)))),
  connector: v.optional(v.union(v.literal("AND"), v.literal("OR"))),
  mode: v.optional(v.union(...WHERE_MODES.map((mode) => v.literal(mode)))),
});
const sortByValidator = v.object({
  field: v.string(),
  direction: v.union(v.literal("asc"), v.literal("desc")),
});

/** `field` that may also be null (Better Auth's "no value"), optional when `optional`. */
function nullable(validator: Validator, optional: boolean): Validator {
  const base = { ...validator, isOptional: false } as Validator;
  const widened = acceptsNull(base) ? base : v.union(base, v.null());
  return optional ? (v.optional(widened) as Validator) : widened;
}

/** Per-model validators of create data and update values (Better Auth's nulls allowed). */
function modelValidators(shape: TableShape) {
  const create: PropertyValidators = {};
  const update: PropertyValidators = {};
  for (const [field, validator] of Object.entries(shape.fields as PropertyValidators)) {
    create[field] = validator.isOptional ? nullable(validator, true) : validator;
    update[field] = nullable(validator, true);
  }
  return { create: v.object(create), update: v.object(update) };
}

const validatorCache = new WeakMap<TableShape, ReturnType<typeof modelValidators>>();
/** A table's validators, built once (they are checked on every auth write). */
function modelValidatorsOf(shape: TableShape) {
  let validators = validatorCache.get(shape);
  if (!validators) validatorCache.set(shape, (validators = modelValidators(shape)));
  return validators;
}

/**
 * The pieces of the data operations' strict argument validators (the table in operations.ts puts
 * them together per operation). The model and its data are checked by `shapeOf` and
 * `checkModelArgs`, which name the model and the field; a union over every model's validator would
 * only say "object | object | …".
 */
export const ARGS = {
  model: v.string(),
  data: v.record(v.any()),
  select: v.optional(v.array(v.string())),
  where: v.array(whereClause),
  sortBy: v.optional(sortByValidator),
  limit: v.optional(v.number()),
  offset: v.optional(v.number()),
  increment: v.record(v.number()),
} as const;

/** The arguments of every operation under `skipValidation`: only the model name is typed. */
export const LOOSE_ARGS: PropertyValidators = {
  model: v.string(),
  data: v.optional(v.any()),
  where: v.optional(v.any()),
  update: v.optional(v.any()),
  select: v.optional(v.any()),
  sortBy: v.optional(v.any()),
  limit: v.optional(v.any()),
  offset: v.optional(v.any()),
  increment: v.optional(v.any()),
  set: v.optional(v.any()),
};

/** Validates `data`/`update` against exactly its model; errors name the model and the field. */
export function checkModelArgs(
  config: DataConfig,
  args: { model: string; data?: unknown; update?: unknown; set?: unknown },
): void {
  let shape: TableShape;
  try {
    shape = shapeOf(config, args.model);
  } catch (e) {
    // Through the functions the model is an argument like any other.
    if (!(e instanceof AppError)) throw e;
    throw new ValidationError("INVALID_ARGUMENTS", "args.model", "an auth model of the schema", e.message);
  }
  const validators = modelValidatorsOf(shape);
  try {
    if (args.data !== undefined) validate(validators.create, args.data, "args.data");
    if (args.update !== undefined) validate(validators.update, args.update, "args.update");
    if (args.set !== undefined) validate(validators.update, args.set, "args.set");
  } catch (e) {
    if (!(e instanceof ValidationError)) throw e;
    throw new ValidationError(
      "INVALID_ARGUMENTS",
      e.path,
      e.expected,
      `Auth model "${args.model}": ${e.message}`,
    );
  }
}
