/**
 * `startService` as applications call it: its options and result speak the {@link Backend}
 * interface, not the runtime class. The platform's own code (CLI, tests, benchmarks) calls
 * `../service.ts`'s `startRuntimeService`, whose `Runtime*` types give callbacks the runtime.
 */
import type { AuthConfig } from "../auth/authenticator.ts";
import type { RunningCluster } from "../cluster/primary.ts";
import {
  type RuntimeClusterServiceOptions,
  type RuntimeRunningService,
  type RuntimeServiceOptions,
  startRuntimeService,
} from "../service.ts";
import type { Backend, BackendEnv } from "./backend.ts";

/**
 * What {@link startService} starts: the app's schema and function modules, where its data lives,
 * its HTTP routes and the hooks around the start.
 *
 * @example
 * ```ts
 * const options: ServiceOptions = {
 *   schema,
 *   modules: { messages, users },
 *   auth: (env) => authConfig(env),
 *   routes: () => authHttpRouter({ createAuth }),
 *   port: 3000,
 * };
 * ```
 */
export interface ServiceOptions extends Omit<RuntimeServiceOptions<Backend>, "attach" | "auth"> {
  /** The JWT providers (step 1) and identity resolver (step 2); a function is asked again when env changes. */
  auth?: AuthConfig | ((env: BackendEnv) => AuthConfig);
}

/**
 * {@link ServiceOptions} with the number of worker processes (cluster mode, the `WORKERS` setting).
 *
 * @example
 * ```ts
 * const service = await startService({ ...options, workers: workersSetting() });
 * ```
 */
export interface ClusterServiceOptions
  extends ServiceOptions,
    Pick<RuntimeClusterServiceOptions<Backend>, "workers"> {}

/**
 * A started service: its backend, URL and graceful `close`.
 *
 * @example
 * ```ts
 * const service = await startService(options);
 * console.log(`listening on ${service.url}`);
 * exitOnSignals(service);
 * ```
 */
export interface RunningService extends Omit<RuntimeRunningService<Backend>, "http"> {}

/**
 * Opens storage, migrates the schema and serves HTTP and the live sync WebSocket on `port`
 * (0 picks a free port). What the options leave unsaid comes from the documented settings
 * (`PORT`, `DATABASE_URL`, `METRICS_TOKEN`, `SHUTDOWN_DELAY_MS`, …, read from `process.env` or
 * `options.settings`), all checked before anything opens: a bad one refuses the start with one
 * `SettingsRefusal` naming each to fix, as `service-auth start` does. `settings: false` reads none.
 * The auth's rules (production secrets, mail) are `startApp`'s (`service-auth/app`).
 *
 * @example
 * ```ts
 * import { exitOnSignals, startService } from "service-auth/server";
 *
 * const service = await startService({ schema, modules }); // PORT, DATABASE_URL, METRICS_TOKEN… from the environment
 * exitOnSignals(service);
 * ```
 */
export function startService(options: ServiceOptions): Promise<RunningService>;
/** With `workers` ≥ 2: the primary gets a {@link RunningCluster}, each worker its {@link RunningService}. */
export function startService(options: ClusterServiceOptions): Promise<RunningService | RunningCluster>;
export function startService(
  options: ServiceOptions | ClusterServiceOptions,
): Promise<RunningService | RunningCluster> {
  // The runtime satisfies `Backend`; its callbacks get the runtime, which is one.
  return startRuntimeService(options) as Promise<RuntimeRunningService | RunningCluster>;
}
