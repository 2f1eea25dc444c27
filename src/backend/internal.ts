/**
 * `service-auth/internal`: what only the project's own packages use (the CLI, tests, benchmarks).
 * No compatibility promise: names here change without notice. Applications and the auth
 * integration use `service-auth/server`, whose `Backend` interface this runtime satisfies.
 * @internal
 * @packageDocumentation
 */

export type { Authenticated } from "./auth/authenticator.ts";
export { TRUSTED_PROXIES_VAR } from "./client-address.ts";
export { EnvStore, parseEnvFile } from "./env/store.ts";
export { ERROR_CODES, httpStatusOf, registeredErrorCodes } from "./errors.ts";
export { functionPath, makeReference } from "./functions/references.ts";
export { isRegisteredFunction } from "./functions/registered.ts";
export type { BackendOptions, Caller } from "./runtime.ts";
/** The runtime behind `service-auth/server`'s `Backend` interface (storage engine, catalog, commits). */
/**
 * @deprecated The runtime class's old name, which was also the name of `service-auth/server`'s
 * interface: use {@link BackendRuntime}.
 */
export { BackendRuntime, BackendRuntime as Backend } from "./runtime.ts";
/** `startService` whose callbacks and result get the runtime {@link BackendRuntime}. */
export type { ClusterServiceOptions, RunningService, ServiceOptions } from "./service.ts";
export { startService } from "./service.ts";
export { isSecretSetting, maskSettingValue } from "./settings/mask.ts";
