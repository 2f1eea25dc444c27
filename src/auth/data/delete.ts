/** `deleteOne` / `deleteMany` / `consumeOne`: beforeDelete → delete → onDelete, per document. */
import type { MutationCtx } from "service-auth/server";
import { findDocs, findFirst } from "../where/index.ts";
import { shapeOf, triggersOf } from "./models.ts";
import type { AnyCtx, DataConfig, DeleteArgs, StoredDoc } from "./types.ts";
import { requireWriter } from "./writer.ts";

async function deleteDoc(
  ctx: MutationCtx<any>,
  config: DataConfig,
  model: string,
  doc: StoredDoc,
): Promise<void> {
  const triggers = triggersOf(config, model);
  if (triggers.beforeDelete) await triggers.beforeDelete(ctx, doc);
  await ctx.db.delete(model, doc._id);
  if (triggers.onDelete) await triggers.onDelete(ctx, doc);
}

/** Deletes the first matching document; nothing matching is not an error. */
export async function dbDeleteOne(ctx: AnyCtx, config: DataConfig, args: DeleteArgs): Promise<null> {
  const shape = shapeOf(config, args.model);
  const writer = requireWriter(ctx, "delete", args.model);
  const doc = await findFirst(writer.db, args.model, shape, args.where);
  if (doc) await deleteDoc(writer, config, args.model, doc);
  return null;
}

/** Deletes every matching document; returns how many. */
export async function dbDeleteMany(ctx: AnyCtx, config: DataConfig, args: DeleteArgs): Promise<number> {
  const shape = shapeOf(config, args.model);
  const writer = requireWriter(ctx, "delete", args.model);
  const docs = await findDocs(writer.db, args.model, shape, { where: args.where });
  for (const doc of docs) await deleteDoc(writer, config, args.model, doc);
  return docs.length;
}

/**
 * `consumeOne` (Better Auth 1.7): deletes the first matching document and returns it, or null when
 * none matched. One transaction, so of parallel consumers of one row exactly one gets it.
 */
export async function dbConsumeOne(
  ctx: AnyCtx,
  config: DataConfig,
  args: DeleteArgs,
): Promise<StoredDoc | null> {
  const shape = shapeOf(config, args.model);
  const writer = requireWriter(ctx, "delete", args.model);
  const doc = await findFirst(writer.db, args.model, shape, args.where);
  if (doc) await deleteDoc(writer, config, args.model, doc);
  return doc;
}
