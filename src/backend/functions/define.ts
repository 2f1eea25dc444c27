/**
 * Function builders: `query`, `mutation`, `action`, their internal variants and `httpAction`.
 * A registered function (registered.ts) is plain data (kind, visibility, args validator, handler);
 * the runtime executes it. Types flow from the `args` validators into the handler and out to `api`
 * references.
 */
import type { ConnectionsReader, ConnectionsWriter } from "../db/connections.ts";
import type { DatabaseReader, DatabaseWriter } from "../db/database.ts";
import type { ScheduledJobsReader } from "../scheduler/jobs-reader.ts";
import type { Scheduler } from "../scheduler/schedule.ts";
import type { DataModelOf, GenericDataModel, SchemaDefinition } from "../schema.ts";
import type { ObjectType, PropertyValidators } from "../values/validators.ts";
import type { FunctionReference } from "./references.ts";
import type { FunctionKind, RegisteredFunction, Visibility } from "./registered.ts";

/**
 * What a verified token tells about the caller. Fields beyond these come from the token claims.
 *
 * @example
 * ```ts
 * import type { UserIdentity } from "service-auth/server";
 *
 * function describeCaller(identity: UserIdentity): string {
 *   return `${identity.subject} (issued by ${identity.issuer})`;
 * }
 * ```
 */
export interface UserIdentity {
  /** The token's `sub`. */
  subject: string;
  /** The token's `iss`. */
  issuer: string;
  tokenIdentifier: string;
  [claim: string]: unknown;
}

/**
 * `ctx.auth`: the caller's identity, established by the transport before the function runs.
 *
 * @example
 * ```ts
 * export const whoAmI = query({
 *   args: {},
 *   handler: async (ctx) => {
 *     const identity = await ctx.auth.getUserIdentity();
 *     if (!identity) throw new AppError("UNAUTHORIZED", "Sign in first");
 *     return identity.subject;
 *   },
 * });
 * ```
 */
export interface Auth {
  getUserIdentity(): Promise<UserIdentity | null>;
  /** The raw bearer token of the request, for forwarding to external APIs. */
  getToken(): string | null;
}

/**
 * Read access to backend environment variables (env store, overridden by the process env).
 *
 * @example
 * ```ts
 * import type { EnvReader } from "service-auth/server";
 *
 * function siteUrl(env: EnvReader): string {
 *   return env.get("SITE_URL") ?? "http://localhost:3000";
 * }
 * ```
 */
export interface EnvReader {
  get(name: string): string | undefined;
}

/**
 * An action's view of the environment variables: it reads them like every function, and may store
 * one for every instance (as `env set` does), e.g. the signing keys a rotation made, so that what
 * the servers use follows from the action alone.
 *
 * @example
 * ```ts
 * const rotate = internalAction({
 *   args: {},
 *   handler: async (ctx) => {
 *     if (!ctx.env.fromProcess("API_KEY")) await ctx.env.set("API_KEY", await newApiKey());
 *   },
 * });
 * ```
 */
export interface ActionEnv extends EnvReader {
  /** Stores `name` for every instance (they see it within about two seconds). */
  set(name: string, value: string): Promise<void>;
  /** Whether this process's environment sets `name`: it overrides the stored value, which `set` changes. */
  fromProcess(name: string): boolean;
}

/**
 * Facts about the request that are not identity (e.g. the client's address).
 *
 * @example
 * ```ts
 * export const whereFrom = query({
 *   args: {},
 *   handler: async (ctx) => ({ ip: ctx.meta.clientIp ?? null, agent: ctx.meta.userAgent ?? null }),
 * });
 * ```
 */
export interface RequestMeta {
  clientIp?: string;
  userAgent?: string;
}

/**
 * The `ctx` of a query handler: read-only database, identity, environment, request facts,
 * live connections and scheduled jobs, all read from one snapshot.
 *
 * @example
 * ```ts
 * import type { QueryCtx } from "service-auth/server";
 * import type { DataModel } from "./functions.ts";
 *
 * async function countMessages(ctx: QueryCtx<DataModel>): Promise<number> {
 *   return (await ctx.db.query("messages").collect()).length;
 * }
 * ```
 */
export interface QueryCtx<DM extends GenericDataModel = GenericDataModel> {
  env: EnvReader;
  db: DatabaseReader<DM>;
  auth: Auth;
  meta: RequestMeta;
  /** The live WebSocket connections of every instance, by session or subject (a live read). */
  connections: ConnectionsReader;
  /** The scheduler's jobs of every instance and their states, without arguments (a live read). */
  scheduledJobs: ScheduledJobsReader;
}

/**
 * The `ctx` of a mutation handler: like {@link QueryCtx} but with a writable `ctx.db`, the
 * scheduler and `ctx.connections.disconnect`, all in one transaction.
 *
 * @example
 * ```ts
 * import type { MutationCtx } from "service-auth/server";
 * import type { DataModel } from "./functions.ts";
 *
 * async function addMessage(ctx: MutationCtx<DataModel>, userId: string, body: string) {
 *   return ctx.db.insert("messages", { body, author: "system", userId });
 * }
 * ```
 */
export interface MutationCtx<DM extends GenericDataModel = GenericDataModel> {
  env: EnvReader;
  db: DatabaseWriter<DM>;
  auth: Auth;
  meta: RequestMeta;
  /** Runs a mutation or action later; the job is written in this mutation's transaction. */
  scheduler: Scheduler;
  /** Lists live connections, and closes them on every instance (`disconnect`). */
  connections: ConnectionsWriter;
  /** The scheduler's jobs of every instance and their states, without arguments. */
  scheduledJobs: ScheduledJobsReader;
}

/**
 * The `ctx` of an action or HTTP action: no direct database access; it calls queries and
 * mutations through `runQuery` / `runMutation` and may do outside work (fetch, mail).
 *
 * @example
 * ```ts
 * export const sendAndCount = action({
 *   args: { body: v.string() },
 *   handler: async (ctx, { body }) => {
 *     await ctx.runMutation(api.messages.send, { body });
 *     return ctx.runQuery(api.users.count, {});
 *   },
 * });
 * ```
 */
export interface ActionCtx {
  env: ActionEnv;
  auth: Auth;
  meta: RequestMeta;
  /** Runs a mutation or action later; each call is a write of its own. */
  scheduler: Scheduler;
  runQuery<R extends FunctionReference<"query", any, any, any>>(
    ref: R,
    args: R["_args"],
  ): Promise<R["_returns"]>;
  runMutation<R extends FunctionReference<"mutation", any, any, any>>(
    ref: R,
    args: R["_args"],
  ): Promise<R["_returns"]>;
  runAction<R extends FunctionReference<"action", any, any, any>>(
    ref: R,
    args: R["_args"],
  ): Promise<R["_returns"]>;
  /**
   * Runs `fn` as one write transaction: every `runQuery` / `runMutation` it makes (also through
   * actions it calls) joins that transaction, sees its earlier writes, and commits with it or not
   * at all. A mutation that throws inside it fails the whole transaction, even when `fn` catches
   * the error. The write lock is held until `fn` settles, so keep slow outside work out of it;
   * `fn` may run again after a serialization conflict (PostgreSQL), like a mutation's handler.
   */
  runInTransaction<T>(fn: () => Promise<T>): Promise<T>;
}

/**
 * An HTTP route handler: a web-standard Request in, a Response out.
 *
 * @example
 * ```ts
 * import type { HttpAction } from "service-auth/server";
 * import { httpAction } from "./functions.ts";
 *
 * export const ping: HttpAction = httpAction(async (_ctx, request) =>
 *   Response.json({ ok: true, method: request.method }),
 * );
 * ```
 */
export interface HttpAction {
  readonly kind: "httpAction";
  readonly handler: (ctx: ActionCtx, request: Request) => Promise<Response>;
}

type ArgsOf<A> = A extends PropertyValidators ? ObjectType<A> : Record<string, never>;

type Builder<K extends FunctionKind, V extends Visibility, Ctx> = <
  A extends PropertyValidators | undefined = undefined,
  R = unknown,
>(definition: {
  args?: A;
  handler: (ctx: Ctx, args: ArgsOf<A>) => R;
}) => RegisteredFunction<K, V, ArgsOf<A>, Awaited<R>>;

function builder<K extends FunctionKind, V extends Visibility>(kind: K, visibility: V): Builder<K, V, any> {
  return ((definition: { args?: PropertyValidators; handler: (ctx: any, args: any) => unknown }) => {
    if (typeof definition?.handler !== "function") throw new Error(`${kind} needs a handler function`);
    return Object.freeze({ kind, visibility, args: definition.args, handler: definition.handler });
  }) as Builder<K, V, any>;
}

/**
 * The function builders typed against one data model.
 *
 * @example
 * ```ts
 * import { type FunctionBuilders, functionsFor, type DataModelOf } from "service-auth/server";
 * import schema from "./schema.ts";
 *
 * const builders: FunctionBuilders<DataModelOf<typeof schema>> = functionsFor(schema);
 * export const { query, mutation, action } = builders;
 * ```
 */
export interface FunctionBuilders<DM extends GenericDataModel> {
  query: Builder<"query", "public", QueryCtx<DM>>;
  internalQuery: Builder<"query", "internal", QueryCtx<DM>>;
  mutation: Builder<"mutation", "public", MutationCtx<DM>>;
  internalMutation: Builder<"mutation", "internal", MutationCtx<DM>>;
  action: Builder<"action", "public", ActionCtx>;
  internalAction: Builder<"action", "internal", ActionCtx>;
  httpAction: (handler: (ctx: ActionCtx, request: Request) => Promise<Response>) => HttpAction;
}

/**
 * Builders whose `ctx.db` is typed by `schema`:
 * `export const { query, mutation } = functionsFor(schema)`.
 *
 * @example
 * ```ts
 * import { functionsFor, v } from "service-auth/server";
 * import schema from "./schema.ts";
 *
 * export const { query, mutation, action, internalMutation, httpAction } = functionsFor(schema);
 *
 * export const byAuthor = query({
 *   args: { author: v.string() },
 *   handler: async (ctx, { author }) =>
 *     (await ctx.db.query("messages").collect()).filter((m) => m.author === author),
 * });
 * ```
 */
export function functionsFor<S extends SchemaDefinition>(_schema?: S): FunctionBuilders<DataModelOf<S>> {
  return {
    query: builder("query", "public"),
    internalQuery: builder("query", "internal"),
    mutation: builder("mutation", "public"),
    internalMutation: builder("mutation", "internal"),
    action: builder("action", "public"),
    internalAction: builder("action", "internal"),
    httpAction: (handler) => Object.freeze({ kind: "httpAction" as const, handler }),
  } as FunctionBuilders<DataModelOf<S>>;
}

/**
 * Wraps a mutation builder so every mutation made with it runs `wrap` around its handler — the
 * pattern for application-level triggers: `wrap` can replace `ctx.db` with one that runs
 * callbacks on each write, inside the same transaction.
 *
 * @example
 * ```ts
 * import { customMutation, type DataModelOf, functionsFor, Triggers } from "service-auth/server";
 * import schema from "./schema.ts";
 *
 * const raw = functionsFor(schema);
 * export const triggers = new Triggers<DataModelOf<typeof schema>>();
 * // Every write made by these mutations runs the registered triggers, in the same transaction.
 * export const mutation = customMutation(raw.mutation, triggers.wrap);
 * export const internalMutation = customMutation(raw.internalMutation, triggers.wrap);
 * ```
 */
export function customMutation<DM extends GenericDataModel, V extends Visibility>(
  base: Builder<"mutation", V, MutationCtx<DM>>,
  wrap: (ctx: MutationCtx<DM>) => MutationCtx<DM> | Promise<MutationCtx<DM>>,
): Builder<"mutation", V, MutationCtx<DM>> {
  return ((definition: { args?: any; handler: (ctx: MutationCtx<DM>, args: any) => unknown }) =>
    base({
      args: definition.args,
      handler: async (ctx: MutationCtx<DM>, args: any) => definition.handler(await wrap(ctx), args),
    })) as Builder<"mutation", V, MutationCtx<DM>>;
}
