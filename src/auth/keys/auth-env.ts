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

export const AUTH_SECRET_VAR = "SERVICE_AUTH_SECRET";
export const JWKS_VAR = "JWKS";

/** The variables a production server refuses to start without. */
export function missingAuthEnv(env: { get(name: string): string | undefined }): string[] {
  return [AUTH_SECRET_VAR, JWKS_VAR].filter((name) => !env.get(name));
}

/** The command that creates them, printed when production refuses to start. */
export const AUTH_ENV_COMMAND = "npm run cli -- env sync --auth";

/** The missing auth variables as start-up problems, each with the command that creates them. */
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
 */
export async function checkAuthStarts(
  backend: Backend,
  checkOptions: FunctionReference<"action", any, Record<string, never>, null> | string,
): Promise<void> {
  await backend.runAction(checkOptions, {}, { allowInternal: true });
}
