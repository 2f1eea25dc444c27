/**
 * The compiled schema: per table its validator, indexes, id tag and index-key function. Built once
 * at start; everything that writes or reads documents goes through it.
 */
import { EVOLUTION_TABLES } from "../evolution/tables.ts";
import { idTag, tableTag } from "../ids.ts";
import { SCHEDULER_TABLES } from "../scheduler/tables.ts";
import { defineTable, type SchemaDefinition, type TableDefinition } from "../schema.ts";
import type { StorageLayout, StoredDocument } from "../storage/engine.ts";
import { encodeKey } from "../storage/indexes/key.ts";
import { v } from "../values/validators.ts";

export interface TableInfo {
  name: string;
  tag: string;
  definition: TableDefinition;
  /** index name -> fields, including `by_creation_time` (fields end with `_creationTime`, `_id`). */
  indexes: Map<string, string[]>;
}

/** Tables the platform itself needs, stored beside the application's. */
export const SYSTEM_TABLES = {
  _env: defineTable({ name: v.string(), value: v.string() }).index("name", ["name"]),
  ...SCHEDULER_TABLES,
  ...EVOLUTION_TABLES,
  /** One row per identified live WebSocket connection on any instance (sync/presence.ts). */
  _connections: defineTable({
    instanceId: v.string(),
    openedAt: v.number(),
    subject: v.string(),
    sessionId: v.optional(v.string()),
    clientIp: v.optional(v.string()),
    userAgent: v.optional(v.string()),
    subscriptions: v.number(),
  })
    .index("instanceId", ["instanceId"])
    .index("subject", ["subject"])
    .index("sessionId", ["sessionId"]),
  /** Each serving instance's last heartbeat: rows of instances that stopped beating are removed. */
  _instances: defineTable({ instanceId: v.string(), heartbeatAt: v.number() }).index("instanceId", [
    "instanceId",
  ]),
  /** Requests to close live connections (by session or subject), heard by every instance. */
  _disconnects: defineTable({
    sessionId: v.optional(v.string()),
    subject: v.optional(v.string()),
    requestedAt: v.number(),
  }).index("requestedAt", ["requestedAt"]),
};

export class Catalog {
  readonly tables = new Map<string, TableInfo>();
  private readonly byTag = new Map<string, TableInfo>();

  constructor(readonly schema: SchemaDefinition) {
    const all = { ...schema.tables, ...SYSTEM_TABLES } as Record<string, TableDefinition>;
    for (const [name, definition] of Object.entries(all)) {
      const tag = tableTag(name);
      const clash = this.byTag.get(tag);
      if (clash) throw new Error(`Tables "${clash.name}" and "${name}" have the same id tag; rename one`);
      const indexes = new Map<string, string[]>([["by_creation_time", ["_creationTime", "_id"]]]);
      for (const index of definition.indexes)
        indexes.set(index.name, [...index.fields, "_creationTime", "_id"]);
      const info: TableInfo = { name, tag, definition, indexes };
      this.tables.set(name, info);
      this.byTag.set(tag, info);
    }
  }

  table(name: string): TableInfo {
    const info = this.tables.get(name);
    if (!info) throw new Error(`Unknown table "${name}"`);
    return info;
  }

  /** The table an id belongs to, or null for a malformed id or one of an unknown table. */
  tableOfId(id: string): TableInfo | null {
    const tag = idTag(id);
    return tag ? (this.byTag.get(tag) ?? null) : null;
  }

  /** Every index key of `doc` (the engine stores them as columns). */
  keysOf = (table: string, doc: StoredDocument): Record<string, Buffer> => {
    const info = this.table(table);
    const keys: Record<string, Buffer> = {};
    for (const [name, fields] of info.indexes) keys[name] = indexKey(doc, fields);
    return keys;
  };

  layout(): StorageLayout {
    const tables: StorageLayout["tables"] = {};
    for (const [name, info] of this.tables) {
      tables[name] = { indexes: info.definition.indexes.map((i) => ({ name: i.name, fields: i.fields })) };
    }
    return { tables };
  }
}

export function indexKey(doc: Record<string, unknown>, fields: string[]): Buffer {
  return encodeKey(fields.map((f) => doc[f]));
}
