/**
 * One query hook's view of a live query: the latest value and error, as an external store for
 * `useSyncExternalStore`. It outlives pauses of its subscription (auth loading, StrictMode
 * remounts), so a value shown once is kept until a newer one arrives.
 */
import type { BackendClient, BackendError } from "../client/client.ts";

export interface QueryState<T = unknown> {
  /** The latest result (the preloaded one until the subscription delivers). */
  readonly value: T | undefined;
  /** Set when the query failed or the subscription was stopped; cleared by the next result. */
  readonly error: BackendError | undefined;
  readonly hasValue: boolean;
}

const EMPTY: QueryState<never> = { value: undefined, error: undefined, hasValue: false };

export class QueryStore<T = unknown> {
  private state: QueryState<T>;
  private readonly listeners = new Set<() => void>();

  constructor(
    readonly path: string,
    readonly args: Record<string, unknown>,
    seed?: { value: T },
  ) {
    this.state = seed ? { value: seed.value, error: undefined, hasValue: true } : EMPTY;
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getSnapshot = (): QueryState<T> => this.state;

  /** Subscribes to the query on `client`; returns the unsubscribe. */
  connect(client: BackendClient): () => void {
    return client.subscribe(
      this.path,
      this.args,
      (value) => this.set({ value: value as T, error: undefined, hasValue: true }),
      (error) => this.set({ ...this.state, error }),
    );
  }

  private set(state: QueryState<T>): void {
    this.state = state;
    for (const listener of [...this.listeners]) listener();
  }
}
