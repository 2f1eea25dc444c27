/**
 * Better Auth's api-key plugin from where the installed line has it: `better-auth/plugins` on 1.4,
 * its own package `@better-auth/api-key` on the newest patched line (compat/better-auth-next).
 * Typed as 1.4.9's, the line `npm run typecheck` checks.
 */
import * as plugins from "better-auth/plugins";
import { ON_PINNED_LINE } from "./better-auth-line.ts";

/** Not resolvable on the pinned line, hence a name TypeScript does not follow. */
const API_KEY_PACKAGE = "@better-auth/api-key";

export const apiKey: typeof plugins.apiKey = ON_PINNED_LINE
  ? plugins.apiKey
  : (await import(/* @vite-ignore */ API_KEY_PACKAGE)).apiKey;
