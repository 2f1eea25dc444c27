/**
 * `ctx.db`: typed document reads for queries and reads + validated writes for mutations. Every
 * read is recorded in the execution's read set, every write in its write set.
 */
import { AppError, ValidationError } from "../errors.ts";
import { newId } from "../ids.ts";
import type { GenericDataModel } from "../schema.ts";
import type { ReadTransaction, StoredDocument, WriteTransaction } from "../storage/engine.ts";
import { validate } from "../values/validate.ts";
import type { Id } from "../values/validators.ts";
import type { Catalog, TableInfo } from "./catalog.ts";
import { Query } from "./query.ts";
import type { DocumentWrite, ReadSet } from "./read-write-sets.ts";

type TableName<DM> = keyof DM & string;
type DocOf<DM extends GenericDataModel, T extends TableName<DM>> = DM[T]["document"];
type WithoutSystem<D> = Omit<D, "_id" | "_creationTime">;
/** Per-table unions (`Omit` over a union of documents would keep only the fields they share). */
type AnyDoc<DM extends GenericDataModel> = { [T in TableName<DM>]: DocOf<DM, T> }[TableName<DM>];
type AnyValue<DM extends GenericDataModel> = {
  [T in TableName<DM>]: WithoutSystem<DocOf<DM, T>>;
}[TableName<DM>];
type AnyPatch<DM extends GenericDataModel> = {
  [T in TableName<DM>]: Partial<WithoutSystem<DocOf<DM, T>>>;
}[TableName<DM>];

/**
 * Read access to the database, available in queries and mutations.
 *
 * @example
 * ```ts
 * import type { DatabaseReader } from "service-auth/server";
 * import type { DataModel } from "./functions.ts";
 *
 * async function profileOf(db: DatabaseReader<DataModel>, userId: string) {
 *   return db.query("profiles").withIndex("userId", (q) => q.eq("userId", userId)).unique();
 * }
 * ```
 */
export interface DatabaseReader<DM extends GenericDataModel = GenericDataModel> {
  /** The document with this id, or null (also for ids that are malformed or of another table). */
  get<T extends TableName<DM>>(table: T, id: string): Promise<DocOf<DM, T> | null>;
  get<T extends TableName<DM>>(id: Id<T>): Promise<DocOf<DM, T> | null>;
  get(id: string): Promise<AnyDoc<DM> | null>;
  query<T extends TableName<DM>>(table: T): Query<DocOf<DM, T>, DM[T]["indexes"]>;
  /** The table a well-formed id belongs to, or null. */
  tableOf(id: string): TableName<DM> | null;
}

/**
 * Read and write access, available in mutations only; writes are part of the mutation's transaction.
 *
 * @example
 * ```ts
 * import type { DatabaseWriter } from "service-auth/server";
 * import type { DataModel } from "./functions.ts";
 *
 * async function bump(db: DatabaseWriter<DataModel>, name: string): Promise<void> {
 *   const counter = await db.query("counters").withIndex("name", (q) => q.eq("name", name)).unique();
 *   if (counter) await db.patch(counter._id, { value: counter.value + 1 });
 *   else await db.insert("counters", { name, value: 1 });
 * }
 * ```
 */
export interface DatabaseWriter<DM extends GenericDataModel = GenericDataModel> extends DatabaseReader<DM> {
  /** Inserts a document and returns its new id (typed as an id of `table`). */
  insert<T extends TableName<DM>>(table: T, value: WithoutSystem<DocOf<DM, T>>): Promise<Id<T>>;
  /** Shallow-merges `value` into the document; a field set to `undefined` is removed. */
  patch<T extends TableName<DM>>(id: Id<T>, value: Partial<WithoutSystem<DocOf<DM, T>>>): Promise<void>;
  patch(id: string, value: AnyPatch<DM>): Promise<void>;
  patch<T extends TableName<DM>>(
    table: T,
    id: string,
    value: Partial<WithoutSystem<DocOf<DM, T>>>,
  ): Promise<void>;
  /** Replaces every field of the document; `_id` and `_creationTime` stay. */
  replace<T extends TableName<DM>>(id: Id<T>, value: WithoutSystem<DocOf<DM, T>>): Promise<void>;
  replace(id: string, value: AnyValue<DM>): Promise<void>;
  delete(id: string): Promise<void>;
  delete<T extends TableName<DM>>(table: T, id: string): Promise<void>;
}

export class DatabaseReaderImpl implements DatabaseReader<any> {
  constructor(
    protected readonly catalog: Catalog,
    protected readonly tx: ReadTransaction,
    readonly readSet: ReadSet,
    /** Platform code (env store) may reach system tables such as `_env`; functions may not. */
    protected readonly system = false,
  ) {}

  /** A table by name; system tables (`_…`, e.g. `_env` with the signing secret) only for platform code. */
  protected tableNamed(name: string): TableInfo {
    if (!this.system && name.startsWith("_")) {
      throw new AppError("BAD_REQUEST", `Table "${name}" is internal to the platform`);
    }
    return this.catalog.table(name);
  }

  /** The table of an id, or null (also for ids of system tables, unless platform code asks). */
  protected tableOfIdVisible(id: string): TableInfo | null {
    const table = this.catalog.tableOfId(id);
    return table && (this.system || !table.name.startsWith("_")) ? table : null;
  }

  protected resolve(tableOrId: string, maybeId: string | undefined): { table: TableInfo | null; id: string } {
    if (maybeId !== undefined) {
      const table = this.tableNamed(tableOrId);
      const owner = this.tableOfIdVisible(maybeId);
      return { table: owner && owner.name === table.name ? table : null, id: maybeId };
    }
    return { table: this.tableOfIdVisible(tableOrId), id: tableOrId };
  }

  // Not async: the engine's promise is handed on, not wrapped in a second one (every promise costs
  // hook calls once Better Auth's AsyncLocalStorage is active; see docs/decisions.md 15).
  get(tableOrId: string, maybeId?: string): Promise<any> {
    const { table, id } = this.resolve(tableOrId, maybeId);
    if (!table) return Promise.resolve(null);
    this.readSet.ids.push({ table: table.name, id });
    return this.tx.get(table.name, id);
  }

  query(table: string): Query<any, any> {
    return new Query(this.tx, this.tableNamed(table), this.readSet);
  }

  tableOf(id: string): string | null {
    return this.tableOfIdVisible(id)?.name ?? null;
  }
}

/**
 * The path of the first value JSON storage would silently change (Infinity/NaN become null,
 * `undefined` in an array becomes null, a Date becomes a string, a bigint throws), or null.
 * Validators like `v.number()` or `v.any()` accept such values, so documents are checked here.
 */
function nonJsonPath(value: unknown, path: string): string | null {
  switch (typeof value) {
    case "string":
    case "boolean":
      return null;
    case "number":
      return Number.isFinite(value) ? null : path;
    case "object": {
      if (value === null) return null;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          if (value[i] === undefined) return `${path}[${i}]`;
          const bad = nonJsonPath(value[i], `${path}[${i}]`);
          if (bad) return bad;
        }
        return null;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return path;
      for (const [k, item] of Object.entries(value)) {
        // An undefined field is absent, as in `patch`.
        const bad = item === undefined ? null : nonJsonPath(item, `${path}.${k}`);
        if (bad) return bad;
      }
      return null;
    }
    default:
      return path;
  }
}

let lastCreationTime = 0;

/**
 * Milliseconds since the epoch, strictly increasing within this process (fractions of a ms
 * separate inserts made in the same ms), so the default creation-time order is insertion order.
 */
function nextCreationTime(): number {
  lastCreationTime = Math.max(Date.now(), lastCreationTime + 1 / 1024);
  return lastCreationTime;
}

function stripSystem(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value))
    if (v !== undefined && k !== "_id" && k !== "_creationTime") out[k] = v;
  return out;
}

export class DatabaseWriterImpl extends DatabaseReaderImpl implements DatabaseWriter<any> {
  constructor(
    catalog: Catalog,
    protected override readonly tx: WriteTransaction,
    readSet: ReadSet,
    readonly writes: DocumentWrite[],
    system = false,
  ) {
    super(catalog, tx, readSet, system);
  }

  private check(table: TableInfo, fields: Record<string, unknown>): void {
    if (fields === null || typeof fields !== "object" || Array.isArray(fields)) {
      throw new AppError("SCHEMA_VIOLATION", `A document of "${table.name}" must be an object`);
    }
    for (const key of Object.keys(fields)) {
      if (key.startsWith("_") && key !== "_id" && key !== "_creationTime") {
        throw new AppError("SCHEMA_VIOLATION", `${table.name}.${key}: field names may not start with "_"`);
      }
    }
    const stored = stripSystem(fields);
    validate(
      { kind: "object", fields: table.definition.fields, isOptional: false },
      stored,
      table.name,
      "SCHEMA_VIOLATION",
    );
    const bad = nonJsonPath(stored, table.name);
    if (bad) {
      throw new ValidationError(
        "SCHEMA_VIOLATION",
        bad,
        "a JSON value",
        `${bad} cannot be stored (not a finite number, string, boolean, null, array or plain object)`,
      );
    }
  }

  /** Keeps our own writes visible to later reads of the same mutation and records the change. */
  private record(write: DocumentWrite): void {
    this.writes.push(write);
  }

  async insert(table: string, value: Record<string, unknown>): Promise<any> {
    const info = this.tableNamed(table);
    this.check(info, value);
    const doc = {
      ...stripSystem(value),
      _id: newId(info.tag),
      _creationTime: nextCreationTime(),
    } as StoredDocument;
    await this.tx.insert(table, doc, this.catalog.keysOf(table, doc));
    this.record({ table, id: doc._id, before: null, after: doc });
    return doc._id;
  }

  private async existing(tableOrId: string, maybeId: string | undefined, op: string) {
    const { table, id } = this.resolve(tableOrId, maybeId);
    const before = table ? await this.tx.get(table.name, id) : null;
    if (!table || !before) throw new AppError("NOT_FOUND", `${op}: no document with id "${id}"`);
    return { table, before };
  }

  async patch(tableOrId: string, a: any, b?: any): Promise<void> {
    const [maybeId, value] = b === undefined ? [undefined, a] : [a, b];
    const { table, before } = await this.existing(tableOrId, maybeId, "patch");
    const merged: Record<string, unknown> = { ...before };
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (k === "_id" || k === "_creationTime") {
        if (v !== undefined && v !== before[k])
          throw new AppError("SCHEMA_VIOLATION", `patch: ${k} cannot change`);
        continue;
      }
      if (v === undefined) delete merged[k];
      else merged[k] = v;
    }
    await this.write(table, before, merged);
  }

  async replace(id: string, value: Record<string, unknown>): Promise<void> {
    const { table, before } = await this.existing(id, undefined, "replace");
    await this.write(table, before, {
      ...stripSystem(value),
      _id: before._id,
      _creationTime: before._creationTime,
    });
  }

  private async write(
    table: TableInfo,
    before: StoredDocument,
    next: Record<string, unknown>,
  ): Promise<void> {
    this.check(table, next);
    const after = {
      ...stripSystem(next),
      _id: before._id,
      _creationTime: before._creationTime,
    } as StoredDocument;
    await this.tx.replace(table.name, after, this.catalog.keysOf(table.name, after));
    this.record({ table: table.name, id: after._id, before, after });
  }

  async delete(tableOrId: string, maybeId?: string): Promise<void> {
    const { table, before } = await this.existing(tableOrId, maybeId, "delete");
    await this.tx.delete(table.name, before._id);
    this.record({ table: table.name, id: before._id, before, after: null });
  }
}
