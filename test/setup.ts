/**
 * Runs in every test file: log lines are JSON (tests parse them; the readable form is asked for
 * by the tests of it), and the temp directories a file made are removed once its tests are done.
 */
import { afterAll } from "vitest";
import { removeTempDirs } from "./helpers/temp.ts";

// Set, not defaulted: a developer's LOG_FORMAT=text in the shell must not change what tests read.
process.env.LOG_FORMAT = "json";

afterAll(() => {
  removeTempDirs();
});
