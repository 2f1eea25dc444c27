/**
 * The in-memory rate-limit store of one process: bounded whatever keys clients make up (Better
 * Auth's own memory store keeps every key forever), with the counts of endpoints that have a rule
 * of their own apart from the rest, so flooding made-up paths cannot push a client's sign-in count
 * out of memory.
 */
import { clientAndPath, ruleOf } from "./keys.ts";
import { consumeStep, type RateLimitEntry, type RateLimitStore } from "./store.ts";

/** Entries kept per store half; the least recently used go first. */
const MAX_ENTRIES = 50_000;

/** A least-recently-used map of a fixed size. */
class BoundedMap {
  private readonly entries = new Map<string, RateLimitEntry>();
  constructor(private readonly max: number) {}

  get(key: string): RateLimitEntry | undefined {
    return this.entries.get(key);
  }

  set(key: string, value: RateLimitEntry): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
  }
}

/**
 * A bounded store keyed by `<client>|<path>` (the client an IPv6 /64); paths under one of
 * `limitedPatterns` live in their own half.
 */
export function memoryRateLimitStore(limitedPatterns: readonly string[]): RateLimitStore {
  const limited = new BoundedMap(MAX_ENTRIES);
  const other = new BoundedMap(MAX_ENTRIES);
  const place = (key: string): { map: BoundedMap; key: string } => {
    const { client, path } = clientAndPath(key);
    return { map: ruleOf(path, limitedPatterns) ? limited : other, key: `${client}|${path}` };
  };
  return {
    async get(key) {
      const at = place(key);
      return at.map.get(at.key);
    },
    async set(key, value) {
      const at = place(key);
      at.map.set(at.key, value);
    },
    // One step, no await in between: atomic within this process.
    async consume(key, rule) {
      const at = place(key);
      const { next, verdict } = consumeStep(at.map.get(at.key), rule, Date.now());
      if (next) at.map.set(at.key, { key, ...next });
      return verdict;
    },
  };
}
