/**
 * Shared query executions: every subscription with the same (path, args, identity key) joins one
 * group, which runs the query once per relevant commit and fans the result out. A result is
 * pushed only when its serialized JSON differs from the last one.
 *
 * A run that failed because the database was unavailable (an outage, a failover) read nothing, so
 * no commit would ever make it run again: it runs again by itself, with backoff, until it answers.
 */

import { backoffDelayMs } from "../../protocol/backoff.ts";
import type { RequestId } from "../../protocol/messages.ts";
import { stableStringify } from "../../protocol/stable-stringify.ts";
import { emptyReadSet, type ReadSet } from "../db/read-write-sets.ts";
import { isUnavailableError } from "../errors.ts";
import type { UserIdentity } from "../functions/define.ts";
import { RETRY_POLICIES } from "../retry/policies.ts";
import type { BackendRuntime } from "../runtime.ts";
import { type Reactor, Watch } from "./reactor.ts";
import { wireError } from "./wire-error.ts";

/** The connection side of a subscription: where a group delivers results. */
export interface Subscriber {
  /** Delivers `body` (`{"value":…}` or `{"error":…}`) for subscription `sub`. */
  deliver(sub: Subscription, body: string): void;
}

/** One client subscription; `idJson` is pre-serialized for cheap fan-out. */
export interface Subscription {
  id: RequestId;
  idJson: string;
  subscriber: Subscriber;
  group: QueryGroup;
}

/** Who a group runs the query as. */
export interface Principal {
  identity: UserIdentity | null;
  token: string | null;
}

export class QueryGroup extends Watch {
  readonly priority = false;
  readonly subs = new Set<Subscription>();
  /** Last pushed body, compared with each new result and sent to late joiners. */
  body: string | null = null;
  /** Transient failures in a row (for the backoff). */
  private failures = 0;
  private retryTimer?: NodeJS.Timeout;
  /** Stops waiting for the database's outage breaker to see it answer again. */
  private unwatchReachable?: () => void;

  constructor(
    private readonly backend: BackendRuntime,
    readonly key: string,
    readonly path: string,
    readonly args: Record<string, unknown>,
    public principal: Principal,
    /** Queues the group for another run (the reactor's invalidate). */
    private readonly rerun: (group: QueryGroup) => void = () => {},
  ) {
    super();
  }

  async execute(): Promise<ReadSet> {
    const readSet = emptyReadSet();
    let body: string;
    try {
      const { value } = await this.backend.runQuery(this.path, this.args, this.principal, readSet);
      body = JSON.stringify({ value });
      this.failures = 0;
    } catch (e) {
      body = JSON.stringify({ error: wireError(e) });
      if (isUnavailableError(e)) this.retryLater();
    }
    if (!this.removed && body !== this.body) {
      this.body = body;
      for (const sub of this.subs) sub.subscriber.deliver(sub, body);
    }
    return readSet;
  }

  private retryLater(): void {
    if (this.removed || this.retryTimer) return;
    const again = () => {
      this.cancelRetry();
      if (!this.removed) this.rerun(this);
    };
    this.retryTimer = setTimeout(again, backoffDelayMs(RETRY_POLICIES.liveQueryRetry, this.failures++));
    this.retryTimer.unref();
    // While the breaker knows the database down, a run would be refused at once: the backoff
    // bounds the wait, the breaker ends it as soon as the database answers.
    const reachability = this.backend.engine?.reachability;
    if (reachability?.isDown) this.unwatchReachable = reachability.onReachable(again);
  }

  /** Stops a pending retry (the group is gone). */
  cancelRetry(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.unwatchReachable?.();
    this.unwatchReachable = undefined;
  }
}

/** Identity key for grouping: results may depend on who asks. */
export function identityKey(identity: UserIdentity | null): string {
  return identity ? `u:${identity.tokenIdentifier}` : "anon";
}

/** All groups of one server. */
export class QueryGroups {
  private readonly groups = new Map<string, QueryGroup>();

  constructor(
    private readonly backend: BackendRuntime,
    private readonly reactor: Reactor,
  ) {}

  get size(): number {
    return this.groups.size;
  }

  /** Adds a subscription; a late joiner gets the group's current result at once. */
  join(
    subscriber: Subscriber,
    id: RequestId,
    path: string,
    args: Record<string, unknown>,
    principal: Principal,
  ): Subscription {
    const key = `${path}\u0000${stableStringify(args)}\u0000${identityKey(principal.identity)}`;
    let group = this.groups.get(key);
    const fresh = !group;
    if (!group) {
      group = new QueryGroup(this.backend, key, path, args, principal, (g) => this.reactor.invalidate(g));
      this.groups.set(key, group);
    }
    const sub: Subscription = { id, idJson: JSON.stringify(id), subscriber, group };
    group.subs.add(sub);
    if (fresh) this.reactor.add(group);
    else if (group.body !== null) subscriber.deliver(sub, group.body);
    return sub;
  }

  leave(sub: Subscription): void {
    const group = sub.group;
    group.subs.delete(sub);
    if (group.subs.size === 0) {
      this.groups.delete(group.key);
      this.reactor.remove(group);
      group.cancelRetry();
    }
  }
}
