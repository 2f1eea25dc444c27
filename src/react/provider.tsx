/**
 * `<BackendProvider>` (no authentication, or authentication the app wires itself) and
 * `<BackendAuthProvider>` (a Better Auth client wired to the backend client).
 */
import { type ReactNode, useEffect, useMemo, useState } from "react";
import type { BackendClient } from "../client/client.ts";
import { AuthStore, UNMANAGED_AUTH } from "./auth-store.ts";
import { BetterAuthBinding, type BetterAuthClientLike } from "./better-auth-binding.ts";
import { BackendContext } from "./context.ts";

/**
 * Props of {@link BackendProvider}: the backend client and the tree that uses it.
 * @example
 * ```tsx
 * const props: BackendProviderProps = { client: new BackendClient(location.origin), children: <App /> };
 * root.render(<BackendProvider {...props} />);
 * ```
 */
export interface BackendProviderProps {
  client: BackendClient;
  children?: ReactNode;
}

/**
 * Makes `client` available to the hooks. Queries subscribe at once; `useAuth` is not available
 * (use {@link BackendAuthProvider} for that). If the app calls `client.setAuth` itself, a
 * sign-out stops the client's live queries and their hooks throw that error.
 * @example
 * ```tsx
 * import { BackendClient } from "service-auth/client";
 * import { BackendProvider } from "service-auth/react";
 *
 * const client = new BackendClient(location.origin);
 * root.render(
 *   <BackendProvider client={client}>
 *     <App />
 *   </BackendProvider>,
 * );
 * ```
 */
export function BackendProvider({ client, children }: BackendProviderProps): ReactNode {
  const value = useMemo(() => ({ client, auth: UNMANAGED_AUTH }), [client]);
  return <BackendContext.Provider value={value}>{children}</BackendContext.Provider>;
}

/**
 * Props of {@link BackendAuthProvider}: the backend client, the Better Auth client that signs the
 * user in, and the tree that uses them.
 * @example
 * ```tsx
 * function Providers({ children }: Pick<BackendAuthProviderProps, "children">) {
 *   return (
 *     <BackendAuthProvider client={client} authClient={authClient}>
 *       {children}
 *     </BackendAuthProvider>
 *   );
 * }
 * ```
 */
export interface BackendAuthProviderProps extends BackendProviderProps {
  /** A Better Auth client (`better-auth/react` or `better-auth/client`) with the `backendClient()` plugin. */
  authClient: BetterAuthClientLike;
}

/**
 * Makes `client` available to the hooks and authenticates it with the Better Auth session:
 * `client.setAuth(() => authClient.backend.getToken(), …)` for each session, re-wired when the
 * session changes, `client.clearAuth()` on sign-out (and on unmount).
 *
 * While the session and the token are being resolved, `useAuth().isLoading` is true and query
 * hooks wait, so a query never runs as anonymous first and fails for lack of a user.
 * @example
 * ```tsx
 * import { createAuthClient } from "better-auth/react";
 * import { BackendClient, backendClient } from "service-auth/client";
 * import { BackendAuthProvider } from "service-auth/react";
 *
 * const client = new BackendClient(location.origin);
 * const authClient = createAuthClient({ plugins: [backendClient()] });
 * root.render(
 *   <BackendAuthProvider client={client} authClient={authClient}>
 *     <App />
 *   </BackendAuthProvider>,
 * );
 * ```
 */
export function BackendAuthProvider({ client, authClient, children }: BackendAuthProviderProps): ReactNode {
  const [auth] = useState(
    () => new AuthStore({ isLoading: true, isAuthenticated: false, identity: 0 }, true),
  );
  useEffect(() => new BetterAuthBinding(client, authClient, auth).start(), [client, authClient, auth]);
  const value = useMemo(() => ({ client, auth }), [client, auth]);
  return <BackendContext.Provider value={value}>{children}</BackendContext.Provider>;
}
