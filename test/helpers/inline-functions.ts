/**
 * Runs test bodies inside real queries and mutations: a body is registered under a fresh name and
 * the module's `t:read` / `t:write` function calls it with its `ctx.db`, so reads, writes, read
 * sets and commits are exactly those of registered functions.
 */
import { functionsFor } from "../../src/backend/functions/define.ts";
import { v } from "../../src/backend/values/index.ts";

export function inlineFunctions() {
  const { query, mutation } = functionsFor();
  const bodies = new Map<string, (db: any) => Promise<unknown>>();
  let counter = 0;
  return {
    /** Register as module `t` of the backend. */
    module: {
      read: query({
        args: { name: v.string() },
        handler: (ctx, { name }) => bodies.get(name)!(ctx.db as any),
      }),
      write: mutation({
        args: { name: v.string() },
        handler: (ctx, { name }) => bodies.get(name)!(ctx.db as any),
      }),
    },
    /** Registers `fn`; returns the args that make `t:read` / `t:write` run it. */
    register(fn: (db: any) => Promise<unknown>): { name: string } {
      const name = `b${counter++}`;
      bodies.set(name, fn);
      return { name };
    },
  };
}
