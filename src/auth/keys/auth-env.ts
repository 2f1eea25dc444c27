/**
 * The auth variables of requirements §5: `SERVICE_AUTH_SECRET` (signing/encryption secret) and `JWKS`
 * (static key set). `env sync --auth` and the first non-production start create them when absent.
 */
import { randomBytes } from "node:crypto";
import {
  type Backend,
  type FunctionReference,
  type SettingProblem,
  settingProblem,
} from "service-auth/server";

/**
 * The name of the auth's signing and encryption secret in the env store: `SERVICE_AUTH_SECRET`.
 *
 * @example
 * ```ts
 * import { betterAuth } from "better-auth";
 * import { AUTH_SECRET_VAR } from "service-auth/auth";
 *
 * const auth = betterAuth({ secret: ctx.env.get(AUTH_SECRET_VAR), database: authData.adapter(ctx) });
 * ```
 */
export const AUTH_SECRET_VAR = "SERVICE_AUTH_SECRET";
/**
 * The name of the signing key set in the env store: `JWKS`, the output of the app's
 * `auth:getLatestJwks` (or `auth:rotateKeys`).
 *
 * @example
 * ```ts
 * import { backend as backendPlugin, JWKS_VAR } from "service-auth/auth";
 *
 * const plugin = backendPlugin({ authConfig: authConfig(env), jwks: env.get(JWKS_VAR) });
 * ```
 */
export const JWKS_VAR = "JWKS";

/**
 * The variables a production server refuses to start without.
 *
 * @example
 * ```ts
 * import { ensureAuthEnv, missingAuthEnv } from "service-auth/auth";
 *
 * // main.ts `prepare`: outside production, generate what is missing.
 * if (missingAuthEnv(backend.env).length > 0) {
 *   const generated = await ensureAuthEnv(backend, internal.auth.getLatestJwks);
 *   logger.warn(`generated ${generated.join(" and ")} for development`);
 * }
 * ```
 */
export function missingAuthEnv(env: { get(name: string): string | undefined }): string[] {
  return [AUTH_SECRET_VAR, JWKS_VAR].filter((name) => !env.get(name));
}

/**
 * The command that creates them, printed when production refuses to start.
 *
 * @example
 * ```ts
 * import { AUTH_ENV_COMMAND } from "service-auth/auth";
 *
 * logger.warn(`generated SERVICE_AUTH_SECRET and JWKS; for production run: ${AUTH_ENV_COMMAND}`);
 * ```
 */
export const AUTH_ENV_COMMAND = "npm run cli -- env sync --auth";

/**
 * The missing auth variables as start-up problems, each with the command that creates them.
 *
 * @example
 * ```ts
 * import { authEnvProblems } from "service-auth/auth";
 * import { SettingsCheck } from "service-auth/server";
 *
 * // main.ts `prepare`: production refuses to start without SERVICE_AUTH_SECRET and JWKS.
 * const check = new SettingsCheck();
 * if (process.env.NODE_ENV === "production") check.add(...authEnvProblems(backend.env));
 * check.refuseIfAny();
 * ```
 */
export function authEnvProblems(
  env: { get(name: string): string | undefined },
  command = AUTH_ENV_COMMAND,
): SettingProblem[] {
  return missingAuthEnv(env).map((name) =>
    settingProblem(
      name,
      undefined,
      "is not set (NODE_ENV=production does not generate it)",
      `run \`${command}\` (creates SERVICE_AUTH_SECRET and JWKS in the database), or set it`,
    ),
  );
}

/**
 * Generates missing auth variables and stores them in the env store, each only if still absent
 * (insert-if-absent in one transaction): any number of instances and CLIs doing this at once on
 * one database agree on the one secret and key set stored first. The secret comes first: signing
 * keys are encrypted with it, so they are made only once the stored secret is known. Returns the
 * names this call stored.
 *
 * @example
 * ```ts
 * import { ensureAuthEnv } from "service-auth/auth";
 *
 * // app.ts: `env sync --auth` creates SERVICE_AUTH_SECRET and JWKS when absent.
 * export const app: ServiceOptions = {
 *   // …schema, modules, auth, routes…
 *   onAuthSync: (backend) => ensureAuthEnv(backend, internal.auth.getLatestJwks),
 * };
 * ```
 */
export async function ensureAuthEnv(
  backend: Backend,
  getLatestJwks: FunctionReference<"action", any, Record<string, never>, string> | string,
): Promise<string[]> {
  const generated: string[] = [];
  if (!backend.env.get(AUTH_SECRET_VAR)) {
    const secret = randomBytes(32).toString("base64url");
    if ((await backend.env.setIfAbsent(AUTH_SECRET_VAR, secret)) === secret) generated.push(AUTH_SECRET_VAR);
  }
  if (!backend.env.get(JWKS_VAR)) {
    const jwks = await backend.runAction(getLatestJwks, {}, { allowInternal: true });
    if (typeof jwks !== "string") throw new Error("getLatestJwks did not return a key set");
    if ((await backend.env.setIfAbsent(JWKS_VAR, jwks)) === jwks) generated.push(JWKS_VAR);
  }
  return generated;
}

/**
 * Initialises the app's auth once through its `checkOptions` function (exported by the `auth`
 * module with the other data functions), so that a refused configuration stops the start: rejects
 * with `AdvisoryRefusal` (one line naming the advisories and the way out) before the server listens.
 *
 * @example
 * ```ts
 * import { AdvisoryRefusal, checkAuthStarts } from "service-auth/auth";
 * import { StartRefusal } from "service-auth/server";
 *
 * // main.ts `prepare`: a refused Better Auth configuration stops the start.
 * try {
 *   await checkAuthStarts(backend, internal.auth.checkOptions);
 * } catch (error) {
 *   if (error instanceof AdvisoryRefusal) throw new StartRefusal(`refusing to start: ${error.message}`);
 *   throw error;
 * }
 * ```
 */
export async function checkAuthStarts(
  backend: Backend,
  checkOptions: FunctionReference<"action", any, Record<string, never>, null> | string,
): Promise<void> {
  await backend.runAction(checkOptions, {}, { allowInternal: true });
}
