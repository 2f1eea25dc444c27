/** `create`: beforeCreate → unique check → insert → onCreate. */
import { AppError } from "service-auth/server";
import { isObject, project, withoutNulls } from "./documents.ts";
import { shapeOf, triggersOf } from "./models.ts";
import type { AnyCtx, CreateArgs, DataConfig, StoredDoc } from "./types.ts";
import { checkUnique } from "./unique.ts";
import { requireWriter } from "./writer.ts";

/** Inserts a document (beforeCreate → unique check → insert → onCreate) and returns it. */
export async function dbCreate(ctx: AnyCtx, config: DataConfig, args: CreateArgs): Promise<StoredDoc> {
  const shape = shapeOf(config, args.model);
  const writer = requireWriter(ctx, "create", args.model);
  if (!isObject(args.data)) throw new AppError("BAD_REQUEST", "create: data must be an object");
  const triggers = triggersOf(config, args.model);
  let data = withoutNulls(shape, args.data, false);
  if (triggers.beforeCreate) {
    const replaced = await triggers.beforeCreate(writer, data as any);
    if (replaced !== undefined && replaced !== null) {
      if (!isObject(replaced))
        throw new AppError("BAD_REQUEST", `beforeCreate of "${args.model}" must return an object or nothing`);
      data = withoutNulls(shape, replaced, false);
    }
  }
  await checkUnique(writer, config, args.model, shape, data);
  const id = await writer.db.insert(args.model, data as any);
  const doc = (await writer.db.get(args.model, id)) as StoredDoc;
  if (triggers.onCreate) await triggers.onCreate(writer, doc);
  return project(doc, args.select)!;
}
