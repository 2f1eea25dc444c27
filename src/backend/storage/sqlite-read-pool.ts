/**
 * The SQLite engine's reader connections: each read runs in its own snapshot (`BEGIN` … `COMMIT`)
 * on a connection nobody else is using, so a query never sees a half-applied mutation and never
 * blocks the writer (WAL). Connections are opened on demand and kept for the next read; the pool
 * grows to the largest number of reads ever open at once. `:memory:` has no second connection:
 * reads run on the writer there.
 */
import type { ReadTransaction } from "./engine.ts";
import { SqliteConnection } from "./sqlite-connection.ts";

export class SqliteReadPool {
  private readonly idle: SqliteConnection[] = [];
  private readonly all: SqliteConnection[] = [];

  constructor(
    private readonly filename: string,
    private readonly synchronous: string,
    private readonly writer: SqliteConnection,
  ) {}

  private take(): SqliteConnection {
    const conn = this.idle.pop();
    if (conn) return conn;
    if (this.filename === ":memory:") return this.writer;
    const created = new SqliteConnection(this.filename, this.synchronous, true);
    this.all.push(created);
    return created;
  }

  async read<T>(fn: (tx: ReadTransaction) => Promise<T>): Promise<T> {
    const conn = this.take();
    if (conn === this.writer) return fn(conn.reader);
    conn.begin.run();
    try {
      return await fn(conn.reader);
    } finally {
      conn.commit.run();
      this.idle.push(conn);
    }
  }

  close(): void {
    for (const r of this.all) r.db.close();
  }
}
