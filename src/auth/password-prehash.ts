/**
 * Better Auth hashes a sign-up's password inside the sign-up's database transaction, after its
 * first read. Through the platform's adapters that transaction is the database's write lock
 * (SQLite: the one writer), so every other write of the service waited for the whole scrypt —
 * 50–100 ms here, and longer when sign-ins hold the scrypt slots (password.ts).
 *
 * Here the password is hashed in a before-hook, outside the transaction, and the hasher hands that
 * hash over when the endpoint asks for the same password. Any hash of a password is a valid hash
 * of it (each with its own salt), so whichever request takes a ready hash, the stored credential is
 * right; a hash is taken once, so no salt is used twice. A hash not taken (the endpoint refused the
 * request) is dropped in the after-hook; at most {@link MAX_READY} wait at any time.
 */
import type { BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware } from "better-auth/api";

/** The endpoints whose password is hashed inside a transaction (Better Auth 1.4 and 1.7). */
const PREHASHED_PATHS = new Set(["/sign-up/email"]);

/** Ready hashes kept at most; beyond, the oldest is dropped (its request hashes again). */
const MAX_READY = 64;

type Hash = (password: string) => Promise<string>;

/** What the hooks read of the request: the body's password and Better Auth's length limits. */
interface HookCtx {
  path?: string;
  body?: { password?: unknown };
  context: { password: { config: { minPasswordLength: number; maxPasswordLength: number } } };
}

/**
 * `hash` made to hand over passwords hashed ahead, and the plugin whose hooks hash them ahead:
 * pass the returned `hash` as `emailAndPassword.password.hash` and add `plugin` to the plugins.
 */
export function prehashedPasswords(hash: Hash): { hash: Hash; plugin: BetterAuthPlugin } {
  /** Password → hashes made ahead, not yet taken; Map order is insertion order (oldest first). */
  const ready = new Map<string, string[]>();
  let count = 0;

  const take = (password: string): string | undefined => {
    const hashes = ready.get(password);
    const taken = hashes?.pop();
    if (taken === undefined) return undefined;
    count--;
    if (hashes?.length === 0) ready.delete(password);
    return taken;
  };
  const put = (password: string, made: string): void => {
    if (count >= MAX_READY) {
      const oldest = ready.keys().next().value;
      if (oldest !== undefined) take(oldest);
    }
    ready.set(password, [...(ready.get(password) ?? []), made]);
    count++;
  };
  /** The request's password when the endpoint would hash it (Better Auth checks the same limits). */
  const passwordOf = (ctx: HookCtx): string | undefined => {
    const password = ctx.body?.password;
    const { minPasswordLength, maxPasswordLength } = ctx.context.password.config;
    return typeof password === "string" &&
      password.length >= minPasswordLength &&
      password.length <= maxPasswordLength
      ? password
      : undefined;
  };
  const matcher = (ctx: { path?: string }) => PREHASHED_PATHS.has(ctx.path ?? "");

  return {
    hash: async (password) => take(password) ?? hash(password),
    plugin: {
      id: "service-auth-password-prehash",
      hooks: {
        before: [
          {
            matcher,
            handler: createAuthMiddleware(async (ctx) => {
              const password = passwordOf(ctx as unknown as HookCtx);
              if (password !== undefined) put(password, await hash(password));
            }),
          },
        ],
        after: [
          {
            matcher,
            handler: createAuthMiddleware(async (ctx) => {
              const password = passwordOf(ctx as unknown as HookCtx);
              if (password !== undefined) take(password);
            }),
          },
        ],
      },
    },
  };
}
