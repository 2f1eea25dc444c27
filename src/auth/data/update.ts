/** `updateOne` / `updateMany` / `incrementOne`: beforeUpdate → unique check → patch → onUpdate, per document. */
import { AppError, type MutationCtx } from "service-auth/server";
import { findDocs, findFirst, type TableShape } from "../where/index.ts";
import { isObject, withoutNulls } from "./documents.ts";
import { shapeOf, triggersOf } from "./models.ts";
import type { AnyCtx, DataConfig, IncrementArgs, StoredDoc, UpdateArgs } from "./types.ts";
import { checkUnique } from "./unique.ts";
import { requireWriter } from "./writer.ts";

async function updateDoc(
  ctx: MutationCtx<any>,
  config: DataConfig,
  model: string,
  shape: TableShape,
  doc: StoredDoc,
  update: Record<string, unknown>,
): Promise<StoredDoc> {
  const triggers = triggersOf(config, model);
  let patch = withoutNulls(shape, update, true);
  if (triggers.beforeUpdate) {
    const replaced = await triggers.beforeUpdate(ctx, doc, patch as any);
    if (replaced !== undefined && replaced !== null) {
      if (!isObject(replaced))
        throw new AppError("BAD_REQUEST", `beforeUpdate of "${model}" must return an object or nothing`);
      patch = withoutNulls(shape, replaced, true);
    }
  }
  await checkUnique(ctx, config, model, shape, patch, doc._id);
  await ctx.db.patch(model, doc._id, patch as any);
  const next = (await ctx.db.get(model, doc._id)) as StoredDoc;
  if (triggers.onUpdate) await triggers.onUpdate(ctx, next, doc);
  return next;
}

function checkUpdate(update: unknown): asserts update is Record<string, unknown> {
  if (!isObject(update)) throw new AppError("BAD_REQUEST", "update must be an object");
}

/** Updates the first matching document; returns it updated, or null when none matched. */
export async function dbUpdateOne(
  ctx: AnyCtx,
  config: DataConfig,
  args: UpdateArgs,
): Promise<StoredDoc | null> {
  const shape = shapeOf(config, args.model);
  const writer = requireWriter(ctx, "update", args.model);
  checkUpdate(args.update);
  const doc = await findFirst(writer.db, args.model, shape, args.where);
  return doc ? updateDoc(writer, config, args.model, shape, doc, args.update) : null;
}

/** Updates every matching document; returns how many. */
export async function dbUpdateMany(ctx: AnyCtx, config: DataConfig, args: UpdateArgs): Promise<number> {
  const shape = shapeOf(config, args.model);
  const writer = requireWriter(ctx, "update", args.model);
  checkUpdate(args.update);
  const docs = await findDocs(writer.db, args.model, shape, { where: args.where });
  for (const doc of docs) await updateDoc(writer, config, args.model, shape, doc, args.update);
  return docs.length;
}

/**
 * `incrementOne` (Better Auth 1.7): on the first document matching `where` (selector and guard at
 * once), adds each delta of `increment` to its field (a missing value counts as 0) and assigns
 * `set`; returns it updated, or null when the guard matched none. One transaction, so parallel
 * increments of one counter all count and a guard like `remaining > 0` holds.
 */
export async function dbIncrementOne(
  ctx: AnyCtx,
  config: DataConfig,
  args: IncrementArgs,
): Promise<StoredDoc | null> {
  const shape = shapeOf(config, args.model);
  const writer = requireWriter(ctx, "update", args.model);
  if (args.set !== undefined) checkUpdate(args.set);
  const doc = await findFirst(writer.db, args.model, shape, args.where);
  if (!doc) return null;
  const update: Record<string, unknown> = { ...args.set };
  for (const [field, delta] of Object.entries(args.increment ?? {})) {
    const current = doc[field] ?? 0;
    if (typeof current !== "number" || !Number.isFinite(delta))
      throw new AppError("BAD_REQUEST", `incrementOne: "${args.model}.${field}" is not a number`);
    update[field] = current + delta;
  }
  return updateDoc(writer, config, args.model, shape, doc, update);
}
