/** Runs in every test file: remove the temp directories it made once its tests are done. */
import { afterAll } from "vitest";
import { removeTempDirs } from "./helpers/temp.ts";

afterAll(() => {
  removeTempDirs();
});
