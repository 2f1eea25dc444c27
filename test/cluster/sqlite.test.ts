/** Cluster mode on one SQLite file: the commit log and the primary's wake-ups between workers. */
import { describe } from "vitest";
import { tempDatabaseFile } from "../helpers/temp.ts";
import { clusterSuite } from "./fixtures/suite.ts";

describe("cluster mode on SQLite (2 workers)", () => {
  clusterSuite(async () => tempDatabaseFile());
});
