/**
 * Types of the Better Auth built modules our test instance imports through the `better-auth-dist`
 * alias (vitest.config.ts); the package ships no declaration for them.
 */
declare module "better-auth-dist/utils/url.mjs" {
  /** The base URL of the auth endpoints: `url` with `path` appended unless it has a path already. */
  export function getBaseURL(url?: string, path?: string, request?: Request, loadEnv?: boolean): string;
}
