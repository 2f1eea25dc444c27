/**
 * Wires a Better Auth client to a backend client, framework-free: follows the Better Auth session
 * atom, hands the backend client a token source for each session (`setAuth`), clears it on
 * sign-out (`clearAuth`), and mirrors the outcome into an {@link AuthStore}.
 */
import type { BackendClient } from "../client/client.ts";
import type { AuthStore } from "./auth-store.ts";

/** What the binding reads from the session atom's value (Better Auth's `useAuthQuery` state). */
interface SessionState {
  data?: { session?: { id?: unknown; token?: unknown } | null } | null;
  error?: unknown;
  isPending?: boolean;
}

/** A nanostores atom as Better Auth exposes it (`subscribe` calls back at once with the current value). */
export interface AtomLike {
  subscribe(listener: (value: any) => void): () => void;
}

/**
 * The parts of a Better Auth client (vanilla or React) the binding uses: the `backendClient()`
 * plugin's token call and the session atom in `$store`.
 * @example
 * ```ts
 * import { createAuthClient } from "better-auth/react";
 * import { backendClient } from "service-auth/client";
 *
 * // Any Better Auth client with the backendClient() plugin fits.
 * const authClient: BetterAuthClientLike = createAuthClient({ plugins: [backendClient()] });
 * ```
 */
export interface BetterAuthClientLike {
  backend: { getToken(): Promise<string | null> };
  $store: {
    atoms: { [name: string]: AtomLike | undefined };
    notify?: (signal?: any) => void;
  };
}

/** The part of the backend client the binding drives. */
export type AuthTarget = Pick<BackendClient, "setAuth" | "clearAuth">;

/** Session key while the first `get-session` failed: let the token endpoint decide. */
const UNKNOWN_SESSION = "\u0000unknown";

export class BetterAuthBinding {
  /** undefined: not known yet; null: signed out; else the session id wired into the client. */
  private sessionKey: string | null | undefined = undefined;
  /** Bumped per wiring so callbacks of an older `setAuth` are ignored. */
  private wiring = 0;
  private wired = false;

  constructor(
    private readonly client: AuthTarget,
    private readonly authClient: BetterAuthClientLike,
    private readonly store: AuthStore,
  ) {}

  /** Starts following the session; returns a stop that also clears the client's auth. */
  start(): () => void {
    const atom = this.authClient.$store.atoms.session;
    if (!atom) throw new Error("The Better Auth client has no session atom ($store.atoms.session)");
    this.store.update({ isLoading: true, isAuthenticated: false });
    const unsubscribe = atom.subscribe((state: SessionState) => this.onSession(state));
    return () => {
      unsubscribe();
      this.wiring++;
      if (this.wired) this.client.clearAuth();
      this.wired = false;
      this.sessionKey = undefined;
    };
  }

  private onSession(state: SessionState): void {
    const session = state?.data?.session;
    let key: string | null;
    if (session) {
      key = String(session.id ?? session.token ?? "session");
    } else if (state?.isPending) {
      return; // first load (or a refetch while signed out): nothing new yet
    } else if (state?.error) {
      // Could not read the session (network, 5xx): not a sign-out. Keep the current wiring, or
      // let the token endpoint decide when nothing is known yet.
      key = this.sessionKey === undefined ? UNKNOWN_SESSION : this.sessionKey;
    } else {
      key = null;
    }
    if (key === this.sessionKey) return;
    const known = this.sessionKey !== undefined;
    this.sessionKey = key;
    // The identity changes unless this is the first answer, or a sign-out the backend already reported.
    const changed = known && (key !== null || this.wired);
    const identity = this.store.getSnapshot().identity + (changed ? 1 : 0);
    const wiring = ++this.wiring;

    if (key === null) {
      if (this.wired) this.client.clearAuth();
      this.wired = false;
      this.store.update({ isLoading: false, isAuthenticated: false, identity });
      return;
    }

    // A new session: start from a clean slate so the client reports the new authentication
    // (it only reports changes, and the previous session may have been authenticated).
    if (this.wired) this.client.clearAuth();
    this.wired = true;
    this.store.update({ isLoading: true, isAuthenticated: false, identity });
    this.client.setAuth(
      // Better Auth's token call always asks the endpoint, so a forced refresh needs nothing extra.
      () => this.authClient.backend.getToken(),
      (isAuthenticated) => {
        if (wiring !== this.wiring) return;
        const current = this.store.getSnapshot();
        if (isAuthenticated) {
          this.store.update({ isLoading: false, isAuthenticated: true });
          return;
        }
        // Signed out by the backend (token endpoint 401, revocation, ban): the client has stopped
        // its live queries, so hooks subscribe again under the new (anonymous) identity.
        this.wired = false;
        this.store.update({ isLoading: false, isAuthenticated: false, identity: current.identity + 1 });
        // Let Better Auth see the session is gone too (its refetch then reports the sign-out).
        this.authClient.$store.notify?.("$sessionSignal");
      },
    );
  }
}
