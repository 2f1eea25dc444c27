/** `count`: the number of matching documents. */
import { countDocs } from "../where/index.ts";
import { shapeOf } from "./models.ts";
import type { AnyCtx, CountArgs, DataConfig } from "./types.ts";

/** The number of matching documents; index-only when an index answers the where exactly. */
export async function dbCount(ctx: AnyCtx, config: DataConfig, args: CountArgs): Promise<number> {
  const shape = shapeOf(config, args.model);
  return countDocs(ctx.db, args.model, shape, args.where);
}
