/**
 * The indexes an engine knows to be still building online (`index-build.ts`), and the refusal of
 * scans and counts on them: `503 INDEX_NOT_READY`, naming the index, until the build is done.
 */
import { AppError } from "../../errors.ts";

/** An index of a schema table. */
export interface IndexRef {
  table: string;
  index: string;
}

/** The error of a scan or count on an index still being built. */
export function indexNotReady({ table, index }: IndexRef): AppError {
  return new AppError(
    "INDEX_NOT_READY",
    `Index "${index}" of table "${table}" is being built; queries on it are refused until it is ready (the server log shows its progress)`,
    { data: { table, index } },
  );
}

/**
 * The indexes this process knows to be still building. Scans and counts on one of them ask
 * their own snapshot whether it is still registered (another process may have finished it) and
 * are refused while it is; the check costs nothing while no build is known.
 */
export class BuildingIndexes {
  private readonly pending = new Map<string, Set<string>>();
  /** How many builds are known; zero makes the check free. */
  size = 0;

  replace(builds: IndexRef[]): void {
    this.pending.clear();
    for (const { table, index } of builds) {
      let set = this.pending.get(table);
      if (!set) this.pending.set(table, (set = new Set()));
      set.add(index);
    }
    this.size = builds.length;
  }

  has(table: string, index: string): boolean {
    return this.pending.get(table)?.has(index) ?? false;
  }

  ready(table: string, index: string): void {
    if (this.pending.get(table)?.delete(index)) this.size--;
  }

  list(): IndexRef[] {
    return [...this.pending].flatMap(([table, set]) => [...set].map((index) => ({ table, index })));
  }

  /**
   * Throws `INDEX_NOT_READY` when `stillBuilding` (a look at the build table in the caller's
   * snapshot) says the build is unfinished; otherwise forgets it.
   */
  refuseWhileBuilding(table: string, index: string, stillBuilding: boolean): void {
    if (stillBuilding) throw indexNotReady({ table, index });
    this.ready(table, index);
  }
}
