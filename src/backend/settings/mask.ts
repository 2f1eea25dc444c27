/**
 * Setting values as they may be shown (start-up refusals, `env list`): secrets by name, and the
 * password inside any `scheme://user:password@host` value, are masked.
 */

/** Names whose values are secret as a whole. */
const SECRET_NAMES =
  /secret|password|passwd|token|jwks|private|credential|cookie|api_?key|(^|_)key$|(^|_)pass$/i;

/** `scheme://user:password@`: the password is what lies between the user's colon and the last `@` of the authority. */
const URL_PASSWORD = /^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:)[^/]*@/i;

/** Whether a setting's name says its value is secret (`SERVICE_AUTH_SECRET`, `JWKS`, `API_KEY` …). */
export function isSecretSetting(name: string): boolean {
  return SECRET_NAMES.test(name);
}

/**
 * `value` with its secrets masked: a secret setting becomes `**** (N characters)`, a URL keeps
 * everything but its password (`postgres://app:****@db:5432/svc`).
 */
export function maskSettingValue(name: string, value: string): string {
  if (isSecretSetting(name)) return `**** (${value.length} characters)`;
  return value.replace(URL_PASSWORD, "$1****@");
}
