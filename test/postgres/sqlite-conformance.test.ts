/** The engine conformance suite on SQLite, so both engines are held to the same behaviour. */
import { SqliteEngine } from "../../src/backend/storage/sqlite.ts";
import { tempDatabaseFile } from "../helpers/temp.ts";
import { engineConformance } from "./engine-conformance.ts";

engineConformance("SQLite", {
  async newStore() {
    const filename = tempDatabaseFile();
    return { open: () => new SqliteEngine({ filename }) };
  },
});
