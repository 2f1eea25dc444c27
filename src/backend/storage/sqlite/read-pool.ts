/**
 * The SQLite engine's reader connections: each read runs in its own snapshot (`BEGIN` … `COMMIT`)
 * on a connection nobody else is using, so a query never sees a half-applied mutation and never
 * blocks the writer (WAL). Connections are opened on demand and kept for the next read; the pool
 * grows to the largest number of reads ever open at once. `:memory:` has no second connection:
 * reads run on the writer there.
 */
import type { ReadTransaction } from "../engine.ts";
import { SqliteConnection } from "./connection.ts";
import { SqliteReader } from "./transaction.ts";

export class SqliteReadPool {
  /** A reader holds no state of its own, so each connection keeps one for all its reads. */
  private readonly idle: SqliteReader[] = [];
  private readonly all: SqliteConnection[] = [];
  /** `:memory:`'s reader, on the writer's connection; otherwise undefined. */
  private readonly onWriter: SqliteReader | undefined;

  constructor(
    private readonly filename: string,
    private readonly synchronous: string,
    private readonly writer: SqliteConnection,
  ) {
    if (filename === ":memory:") this.onWriter = new SqliteReader(writer);
  }

  private take(): SqliteReader {
    const reader = this.idle.pop();
    if (reader) return reader;
    const created = new SqliteConnection(this.filename, this.synchronous, true);
    this.all.push(created);
    return new SqliteReader(created);
  }

  async read<T>(fn: (tx: ReadTransaction) => Promise<T>): Promise<T> {
    if (this.onWriter) return fn(this.onWriter);
    const reader = this.take();
    const conn = reader.connection;
    // The migrated statements, which carry the indexes still being built.
    conn.sql = this.writer.sql;
    conn.begin.run();
    try {
      return await fn(reader);
    } finally {
      conn.commit.run();
      this.idle.push(reader);
    }
  }

  close(): void {
    for (const c of this.all) c.db.close();
  }
}
