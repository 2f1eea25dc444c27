/**
 * The authentication state React components read (`useAuth`, and `useQuery` to know when to
 * subscribe), kept outside React so the client's callbacks can update it synchronously: a query
 * error and the sign-out that caused it are then rendered together, never one without the other.
 */

/**
 * The authentication state: whether it is still being resolved, whether the backend accepted the
 * token, and a counter bumped when the identity changes.
 * @example
 * ```svelte
 * <script lang="ts">
 *   import { getServiceAuth } from "service-auth/svelte";
 *   const { auth } = getServiceAuth(); // auth: Readable<AuthSnapshot>
 * </script>
 *
 * {#if $auth.isLoading}<p>Loading…</p>{:else if !$auth.isAuthenticated}<SignIn />{/if}
 * ```
 */
export interface AuthSnapshot {
  /** The session or the token is still being resolved: queries wait. */
  readonly isLoading: boolean;
  /** The server accepted the current token. */
  readonly isAuthenticated: boolean;
  /**
   * Bumped when the identity changes after it was first known (sign-out, revocation, account
   * switch): query hooks drop results of the previous identity and subscribe again.
   */
  readonly identity: number;
}

export class AuthStore {
  private snapshot: AuthSnapshot;
  private readonly listeners = new Set<() => void>();

  constructor(
    initial: AuthSnapshot,
    /** Whether an auth provider drives this store (`useAuth` requires one). */
    readonly managed: boolean,
  ) {
    this.snapshot = initial;
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getSnapshot = (): AuthSnapshot => this.snapshot;

  /** Applies a change; listeners run only when something changed. */
  update(change: Partial<AuthSnapshot>): void {
    const next = { ...this.snapshot, ...change };
    const prev = this.snapshot;
    if (
      next.isLoading === prev.isLoading &&
      next.isAuthenticated === prev.isAuthenticated &&
      next.identity === prev.identity
    ) {
      return;
    }
    this.snapshot = next;
    for (const listener of [...this.listeners]) listener();
  }
}

/** The state used without an auth provider: nothing to wait for, never authenticated. */
export const UNMANAGED_AUTH = new AuthStore({ isLoading: false, isAuthenticated: false, identity: 0 }, false);
