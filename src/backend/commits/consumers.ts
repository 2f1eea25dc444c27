/**
 * Who hears each commit, in the order they hear it: every commit (this process's, another
 * instance's, or an unknown one) is delivered to these consumers top to bottom, whatever order
 * their owners were constructed in. Each owner attaches under its name here
 * (`commits.on(name, listener)`); a new consumer gets a line here, in the phase its job belongs to.
 *
 * `invalidate` drops what a commit made stale before anyone acts on it; a listener that throws
 * is not contained (the commit's publisher hears the error: skipping an invalidation would be
 * unsafe). `notify` acts on the commit; a failing listener is logged and the others still hear it.
 */
export const COMMIT_CONSUMERS = [
  {
    phase: "invalidate",
    consumers: [
      // auth/identity-cache.ts: drops each cached identity whose step 2 read a document the commit
      // wrote (all of them for an unknown commit).
      "identity-cache",
      // runtime.ts: reloads the env store after a commit of `_env` (or an unknown one).
      "env-store",
    ],
  },
  {
    phase: "notify",
    consumers: [
      // sync/reactor.ts (attached by sync/server.ts): marks the live queries and the connections'
      // identity watches the commit touched, to run again (an identity re-check ends a revoked one).
      "live-queries",
      // sync/presence.ts (attached by sync/server.ts): closes the connections here that a
      // `_disconnects` request names (`ctx.connections.disconnect`, on any instance).
      "presence",
      // scheduler/runner.ts: wakes for a commit of `_scheduled_jobs`.
      "scheduler",
      // `BackendRuntime.onCommit`: anyone else (tests, tools), after the platform's own.
      "listeners",
    ],
  },
] as const;

/** A commit's delivery phases, first to last: `invalidate`, then `notify`. */
export type CommitPhase = (typeof COMMIT_CONSUMERS)[number]["phase"];
/** A consumer of commits, as declared in {@link COMMIT_CONSUMERS}. */
export type CommitConsumer = (typeof COMMIT_CONSUMERS)[number]["consumers"][number];
