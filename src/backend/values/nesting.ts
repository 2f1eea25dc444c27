/**
 * The nesting-depth limit of function arguments. Checked iteratively before anything walks the
 * value recursively (validators, `stableStringify`'s callers, storage), so hostile input nested
 * thousands of levels deep is refused with a typed error instead of overflowing the stack.
 */

/** Deepest accepted nesting of objects and arrays in a call's `args` (the args object is level 1). */
export const MAX_ARGS_DEPTH = 64;

/** Whether `value` nests objects/arrays more than `maxDepth` levels deep. Never recurses. */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  // Two parallel stacks (values, their depths): no pair object per node.
  const values: object[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const item = values.pop() as object;
    const depth = depths.pop() as number;
    if (depth > maxDepth) return true;
    const children = Array.isArray(item) ? item : Object.values(item);
    for (const child of children) {
      if (typeof child === "object" && child !== null) {
        values.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}
