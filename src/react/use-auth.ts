/** `useAuth`: whether the backend accepted the user's token. */
import { useSyncExternalStore } from "react";
import { useBackendContext } from "./context.ts";

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
