/**
 * The Better Auth installed: the pinned 1.4.9 (`npm test`) or the newest patched line
 * (`npm run better-auth-next`, docs/security.md). Tests that hold on one line only say so with it.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

// better-auth exports no ./package.json; its entry is dist/index.mjs, one level below the package.
const entry = createRequire(import.meta.url).resolve("better-auth");
const packageJson = JSON.parse(readFileSync(join(dirname(entry), "..", "package.json"), "utf8"));

/** The installed better-auth's version. */
export const BETTER_AUTH_VERSION: string = packageJson.version;

/** True on the pinned 1.4 line, false on the newest patched line. */
export const ON_PINNED_LINE: boolean = BETTER_AUTH_VERSION.startsWith("1.4.");

/**
 * The generic OAuth plugin's routes (below the auth base path): its own on 1.4, the core social
 * sign-in and callback on 1.7, which registers its providers as social providers.
 */
export const GENERIC_OAUTH = ON_PINNED_LINE
  ? {
      signIn: "/sign-in/oauth2",
      signInBody: (providerId: string, callbackURL: string) => ({ providerId, callbackURL }),
      callback: (providerId: string) => `/oauth2/callback/${providerId}`,
    }
  : {
      signIn: "/sign-in/social",
      signInBody: (providerId: string, callbackURL: string) => ({ provider: providerId, callbackURL }),
      callback: (providerId: string) => `/callback/${providerId}`,
    };
