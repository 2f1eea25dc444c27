/** Cluster mode on PostgreSQL: the workers are instances following the commit log. */
import { describe } from "vitest";
import { postgresBinDir, usePostgres } from "../helpers/postgres.ts";
import { clusterSuite } from "./fixtures/suite.ts";

describe.skipIf(!postgresBinDir)("cluster mode on PostgreSQL (2 workers)", () => {
  const server = usePostgres();
  clusterSuite(() => server().createDatabase());
});
