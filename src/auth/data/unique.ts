/** Unique fields, enforced on every write: the document store has no unique indexes. */
import { AppError, type MutationCtx } from "service-auth/server";
import { findFirst, type TableShape } from "../where/index.ts";
import { uniqueFieldsOf } from "./models.ts";
import type { DataConfig } from "./types.ts";

/** Refuses a write that would give a unique field a value another document of `model` has. */
export async function checkUnique(
  ctx: MutationCtx<any>,
  config: DataConfig,
  model: string,
  shape: TableShape,
  values: Record<string, unknown>,
  selfId?: string,
): Promise<void> {
  for (const field of uniqueFieldsOf(config, model)) {
    const value = values[field];
    if (value === undefined || value === null) continue;
    const other = await findFirst(ctx.db, model, shape, [{ field, value: value as string, operator: "eq" }]);
    if (other && other._id !== selfId) {
      throw new AppError("CONFLICT", `A ${model} with this ${field} already exists`, {
        data: { model, field },
      });
    }
  }
}
