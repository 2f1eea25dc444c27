/**
 * JSON with object keys sorted and `undefined` fields dropped, so equal values give equal strings
 * whatever their key order: the server groups identical subscriptions by it, the clients key their
 * live queries by it.
 *
 * Iterative (an explicit stack, no recursion): deeply nested input cannot overflow the call stack.
 * A cycle throws a TypeError, as `JSON.stringify` does.
 */

/** Text to append as is (the stack holds values to serialize and these between them). */
class Token {
  constructor(readonly text: string) {}
}
const COMMA = new Token(",");

/** Marks the end of an object or array: closes it and takes it off the cycle check's path. */
class Close {
  constructor(
    readonly text: string,
    readonly container: object,
  ) {}
}

export function stableStringify(value: unknown): string {
  let out = "";
  const stack: unknown[] = [value];
  /** The containers being serialized, outermost first: meeting one again is a cycle. */
  const path = new Set<object>();
  while (stack.length > 0) {
    const item = stack.pop();
    if (item instanceof Token) {
      out += item.text;
      continue;
    }
    if (item instanceof Close) {
      out += item.text;
      path.delete(item.container);
      continue;
    }
    if (item === null || typeof item !== "object") {
      out += JSON.stringify(item) ?? "null";
      continue;
    }
    if (path.has(item)) throw new TypeError("stableStringify: cannot serialize a cyclic structure");
    path.add(item);
    if (Array.isArray(item)) {
      out += "[";
      stack.push(new Close("]", item));
      for (let i = item.length - 1; i >= 0; i--) {
        stack.push(item[i]);
        if (i > 0) stack.push(COMMA);
      }
      continue;
    }
    out += "{";
    stack.push(new Close("}", item));
    const keys = Object.keys(item).sort();
    let first = true;
    // Pushed in reverse so they pop in order; the comma goes before every field but the first kept.
    const fields: unknown[] = [];
    for (const key of keys) {
      const field = (item as Record<string, unknown>)[key];
      if (field === undefined) continue;
      if (!first) fields.push(COMMA);
      first = false;
      fields.push(new Token(`${JSON.stringify(key)}:`), field);
    }
    for (let i = fields.length - 1; i >= 0; i--) stack.push(fields[i]);
  }
  return out;
}
