/** Temporary directories for tests: real files under os.tmpdir(), removed when the process exits. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const created = new Set<string>();
let hooked = false;

/** A fresh empty directory under the OS temp dir; deleted when the test process exits. */
export function tempDir(prefix = "service-auth-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  created.add(dir);
  if (!hooked) {
    hooked = true;
    process.once("exit", () => {
      for (const d of created) rmSync(d, { recursive: true, force: true });
    });
  }
  return dir;
}

/**
 * Removes every directory made so far. `test/setup.ts` calls it after each test file, because
 * vitest may end its worker processes without an "exit" event.
 */
export function removeTempDirs(): void {
  for (const d of created) rmSync(d, { recursive: true, force: true });
  created.clear();
}

/** A path for a new SQLite database file in a fresh temp dir. */
export function tempDatabaseFile(name = "test.sqlite"): string {
  return join(tempDir(), name);
}
