/**
 * The engine conformance suite on both engines. PostgreSQL runs on a server the test starts
 * (test/helpers/postgres.ts): skipped loudly when not installed, a failure under CI=true.
 */
import Database from "@service-auth/better-sqlite3";
import { describe } from "vitest";
import { PostgresEngine } from "../../src/backend/storage/postgres/engine.ts";
import { SqliteEngine } from "../../src/backend/storage/sqlite/engine.ts";
import { postgresBinDir, usePostgres } from "../helpers/postgres.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";
import { engineConformance } from "./engine-conformance.ts";

engineConformance("SQLite", {
  async newStore() {
    const filename = tempDatabaseFile();
    return {
      open: () => new SqliteEngine({ filename }),
      async sql(text) {
        const db = new Database(filename);
        try {
          const stmt = db.prepare(text);
          if (stmt.reader) return stmt.all() as Record<string, unknown>[];
          stmt.run();
          return [];
        } finally {
          db.close();
        }
      },
    };
  },
});

describe.skipIf(!postgresBinDir)("PostgreSQL", () => {
  const server = usePostgres();
  engineConformance("PostgreSQL", {
    async newStore() {
      const url = await server().createDatabase();
      return {
        open: () => new PostgresEngine({ connectionString: url }),
        sql: (text) => server().sql(text, [], url),
      };
    },
  });
});
