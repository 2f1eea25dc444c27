/**
 * Which tables the auth data layer may touch and what the configuration says about each: its
 * table shape, its triggers and its unique fields.
 */
import { AppError, type MutationCtx, type SchemaDefinition } from "service-auth/server";
import { AUTH_TABLE_NAMES, AUTH_UNIQUE_FIELDS, authTableInfo } from "../schema/auth-schema.ts";
import type { TableShape } from "../where/index.ts";
import type { DataConfig, ModelTriggers, StoredDoc } from "./types.ts";

/** Per schema: the tables made by `defineAuthTables` / `defineAuthEnts` or named like requirements §2's. */
const authModelsCache = new WeakMap<SchemaDefinition, readonly string[]>();

function modelsOf(config: DataConfig): readonly string[] {
  if (config.models) return config.models;
  let models = authModelsCache.get(config.schema);
  if (!models) {
    models = Object.entries(config.schema.tables)
      .filter(
        ([name, table]) => authTableInfo(table) || (AUTH_TABLE_NAMES as readonly string[]).includes(name),
      )
      .map(([name]) => name);
    authModelsCache.set(config.schema, models);
  }
  return models;
}

/** The table of `model`, or a typed error naming the model and the fix for one the auth layer may not touch. */
export function shapeOf(config: DataConfig, model: unknown): TableShape {
  const table = typeof model === "string" ? config.schema.tables[model] : undefined;
  if (!table || !modelsOf(config).includes(model as string)) {
    const name = String(model).slice(0, 64);
    const why = table
      ? `the schema's "${name}" table was not made by defineAuthTables / defineAuthEnts (or marked with markAuthTable)`
      : `the schema has no "${name}" table`;
    throw new AppError(
      "BAD_REQUEST",
      `Unknown auth model "${name}": ${why}. Declare the auth tables with defineAuthTables(authOptions) using the same plugins and options as betterAuth, or write them with \`npm run cli -- auth generate\`.`,
      { data: { model: name } },
    );
  }
  return table;
}

export function triggersOf(config: DataConfig, model: string): ModelTriggers<StoredDoc, MutationCtx<any>> {
  return ((config.triggers as Record<string, ModelTriggers> | undefined)?.[model] ?? {}) as ModelTriggers;
}

/** The fields of `model` that must be unique. */
export function uniqueFieldsOf(config: DataConfig, model: string): readonly string[] {
  return config.uniqueFields
    ? (config.uniqueFields[model] ?? [])
    : (authTableInfo(config.schema.tables[model])?.unique ?? AUTH_UNIQUE_FIELDS[model] ?? []);
}
