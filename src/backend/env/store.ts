/**
 * Backend environment variables stored in the database (`_env` table), so every process and
 * instance sees the same values. Process environment variables override stored ones. Reads are
 * synchronous from an in-memory copy, refreshed on every commit that touches `_env` (this
 * process) or on any commit of another process.
 */
import type { DatabaseReader, DatabaseWriter } from "../db/database.ts";

/** Where the store keeps its rows: internal reads and writes that may touch the `_env` system table. */
export interface EnvDatabase {
  read<T>(fn: (db: DatabaseReader) => Promise<T>): Promise<T>;
  /** Must publish the commit like a mutation's, so other processes reload too. */
  write<T>(fn: (db: DatabaseWriter) => Promise<T>): Promise<T>;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export class EnvStore {
  private values = new Map<string, string>();
  private readonly defaults = new Map<string, string>();
  private readonly listeners = new Set<() => void>();
  /** Reloads overlap and may answer out of order: only the newest one started may apply. */
  private loadsStarted = 0;
  private newestApplied = 0;

  /** The newest reload started (the only one that may apply), until it has ended. */
  private newestLoad: Promise<void> | undefined;

  constructor(private readonly database: EnvDatabase) {}

  /** Reloads stored values from the database. */
  load(): Promise<void> {
    const loading = this.reload();
    this.newestLoad = loading;
    const ended = () => {
      if (this.newestLoad === loading) this.newestLoad = undefined;
    };
    loading.then(ended, ended);
    return loading;
  }

  /**
   * Resolves once the newest reload started so far has ended (at once when none is running): a
   * commit of another instance that touched `_env` starts one, and a caller that caught up with
   * the commits (a token of a key just rotated elsewhere) waits here for the values it brought.
   */
  settled(): Promise<void> {
    return this.newestLoad ? this.newestLoad.catch(() => {}) : Promise.resolve();
  }

  private async reload(): Promise<void> {
    const ticket = ++this.loadsStarted;
    const rows = await this.database.read((db) => db.query("_env").collect());
    // An older reload answering late must not undo a newer one (or a local set/remove).
    if (ticket < this.newestApplied) return;
    this.newestApplied = ticket;
    const next = new Map(rows.map((r) => [r.name as string, r.value as string]));
    const changed = next.size !== this.values.size || [...next].some(([k, v]) => this.values.get(k) !== v);
    this.values = next;
    if (changed) this.notify();
  }

  /** Calls `listener` after stored values changed. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The effective value: the process environment first, then the stored value, then the default. */
  get(name: string): string | undefined {
    return process.env[name] ?? this.values.get(name) ?? this.defaults.get(name);
  }

  /** Whether the process environment sets `name` (overriding a stored value). */
  fromProcess(name: string): boolean {
    return process.env[name] !== undefined;
  }

  /** A value used when neither the process environment nor the store has one (e.g. `SITE_URL`). */
  setDefault(name: string, value: string): void {
    this.defaults.set(name, value);
  }

  /** Stored values only (what `env list` shows), sorted by name. */
  stored(): [string, string][] {
    return [...this.values].sort(([a], [b]) => a.localeCompare(b));
  }

  async set(name: string, value: string): Promise<void> {
    if (!NAME.test(name)) throw new Error(`Invalid variable name "${name}"`);
    await this.database.write(async (db) => {
      const existing = await db
        .query("_env")
        .withIndex("name", (q) => q.eq("name", name))
        .unique();
      if (existing) await db.patch(existing._id, { value });
      else await db.insert("_env", { name, value });
    });
    this.newestApplied = this.loadsStarted; // reloads begun before this write are outdated
    if (this.values.get(name) !== value) {
      this.values.set(name, value);
      this.notify();
    }
  }

  /**
   * Stores `value` under `name` unless a value is stored already, in one transaction, and returns
   * the stored value: of several processes setting the same name at once, exactly one wins and
   * every caller gets the winner's value (e.g. a generated secret on a first start).
   */
  async setIfAbsent(name: string, value: string): Promise<string> {
    if (!NAME.test(name)) throw new Error(`Invalid variable name "${name}"`);
    const stored = await this.database.write(async (db) => {
      const existing = await db
        .query("_env")
        .withIndex("name", (q) => q.eq("name", name))
        .unique();
      if (existing) return existing.value as string;
      await db.insert("_env", { name, value });
      return value;
    });
    this.newestApplied = this.loadsStarted;
    if (this.values.get(name) !== stored) {
      this.values.set(name, stored);
      this.notify();
    }
    return stored;
  }

  private notify(): void {
    for (const l of this.listeners) l();
  }

  async remove(name: string): Promise<boolean> {
    const removed = await this.database.write(async (db) => {
      const existing = await db
        .query("_env")
        .withIndex("name", (q) => q.eq("name", name))
        .unique();
      if (existing) await db.delete(existing._id);
      return Boolean(existing);
    });
    this.newestApplied = this.loadsStarted;
    if (this.values.delete(name)) this.notify();
    return removed;
  }
}

/** Parses a dotenv file: `NAME=value`, `# comments`, optional quotes, `export ` prefix. */
export function parseEnvFile(text: string): [string, string][] {
  const out: [string, string][] = [];
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    // The line itself is not echoed: it may hold a secret.
    if (!m) throw new Error(`Cannot parse env file line ${index + 1}: expected NAME=value`);
    let value = m[2];
    if ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'"))) {
      value = value.slice(1, -1);
      if (m[2].startsWith('"')) value = value.replace(/\\n/g, "\n").replace(/\\"/g, '"');
    }
    out.push([m[1], value]);
  }
  return out;
}
