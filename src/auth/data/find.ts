/** `findOne` / `findMany`: reads answered by the where layer, projected to the selected fields. */
import { findDocs, findFirst } from "../where/index.ts";
import { project } from "./documents.ts";
import { shapeOf } from "./models.ts";
import type { AnyCtx, DataConfig, FindManyArgs, FindOneArgs, StoredDoc } from "./types.ts";

/** The first matching document, or null. */
export async function dbFindOne(
  ctx: AnyCtx,
  config: DataConfig,
  args: FindOneArgs,
): Promise<StoredDoc | null> {
  const shape = shapeOf(config, args.model);
  return project(await findFirst(ctx.db, args.model, shape, args.where), args.select);
}

/** Matching documents, sorted and windowed. */
export async function dbFindMany(ctx: AnyCtx, config: DataConfig, args: FindManyArgs): Promise<StoredDoc[]> {
  const shape = shapeOf(config, args.model);
  const docs = await findDocs(ctx.db, args.model, shape, args);
  return args.select?.length ? docs.map((d) => project(d, args.select)!) : docs;
}
