/** The React context carrying the backend client and its authentication state. */
import { createContext, useContext } from "react";
import type { BackendClient } from "../client/client.ts";
import type { AuthStore } from "./auth-store.ts";

export interface BackendContextValue {
  client: BackendClient;
  auth: AuthStore;
}

export const BackendContext = createContext<BackendContextValue | null>(null);
BackendContext.displayName = "BackendContext";

/** The provider's client and auth state; throws outside a provider (a setup mistake, not a state). */
export function useBackendContext(): BackendContextValue {
  const value = useContext(BackendContext);
  if (!value)
    throw new Error(
      "service-auth/react hooks must be used inside <BackendProvider> or <BackendAuthProvider>",
    );
  return value;
}

/**
 * The {@link BackendClient} of the nearest provider, for calls the hooks do not cover.
 * @example
 * ```tsx
 * function ConnectionBadge() {
 *   const client = useBackendClient();
 *   return <span>{client.isAuthenticated ? "signed in" : "anonymous"}</span>;
 * }
 * ```
 */
export function useBackendClient(): BackendClient {
  return useBackendContext().client;
}
