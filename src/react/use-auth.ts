/** `useAuth`: whether the backend accepted the user's token. */
import { useSyncExternalStore } from "react";
import { useBackendContext } from "./context.ts";

/**
 * What {@link useAuth} returns: whether the session is still being resolved, and whether the
 * backend accepted the user's token.
 * @example
 * ```tsx
 * function SignedInOnly({ children }: { children: ReactNode }) {
 *   const { isLoading, isAuthenticated }: AuthState = useAuth();
 *   if (isLoading) return <Spinner />;
 *   return isAuthenticated ? children : <SignIn />;
 * }
 * ```
 */
export interface AuthState {
  /** The session or token is still being resolved (queries wait meanwhile). */
  isLoading: boolean;
  /** The backend accepted the current token. */
  isAuthenticated: boolean;
}

/**
 * The authentication state of the backend connection, under {@link BackendAuthProvider}:
 * `isLoading` until the session is known and the server answered, then `isAuthenticated`.
 * Throws under a plain `BackendProvider`, which does not track authentication.
 * @example
 * ```tsx
 * function Messages() {
 *   const { isLoading, isAuthenticated } = useAuth();
 *   const messages = useQuery(api.messages.list, isAuthenticated ? {} : "skip");
 *   if (isLoading) return <p>Loading…</p>;
 *   if (!isAuthenticated) return <SignIn />;
 *   return <ul>{messages?.map((m) => <li key={m._id}>{m.body}</li>)}</ul>;
 * }
 * ```
 */
export function useAuth(): AuthState {
  const { auth } = useBackendContext();
  if (!auth.managed) throw new Error("useAuth() needs <BackendAuthProvider>");
  const { isLoading, isAuthenticated } = useSyncExternalStore(
    auth.subscribe,
    auth.getSnapshot,
    auth.getSnapshot,
  );
  return { isLoading, isAuthenticated };
}
