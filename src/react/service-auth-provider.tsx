/**
 * The provider of a server-rendered React app (Next.js, TanStack Start): one backend client
 * (WebSocket to the backend) and one Better Auth client (on the app's origin, whose auth route
 * fronts the backend) per page load, wired together by `<BackendAuthProvider>`. Queries preloaded
 * on the server show at once (`usePreloadedQuery`) and then follow live. The framework bindings
 * export it under their own names.
 *
 * Server rendering renders only — effects, which connect and subscribe, run in the browser — so
 * there the backend client gets a socket that never opens.
 */
import { createAuthClient } from "better-auth/client";
import { createContext, type ReactNode, useContext, useState } from "react";
import { backendClient } from "../client/auth-plugin.ts";
import { BackendClient, type BackendClientOptions } from "../client/client.ts";
import type { WebSocketLike } from "../client/transport.ts";
import type { BetterAuthClientLike } from "./better-auth-binding.ts";
import { BackendAuthProvider } from "./provider.tsx";

/**
 * The Better Auth client the provider makes when the app passes none.
 * @example
 * ```ts
 * // Exported as createNextAuthClient (service-auth/nextjs/client) and createStartAuthClient
 * // (service-auth/tanstack-start). In a client module:
 * import { createNextAuthClient } from "service-auth/nextjs/client";
 *
 * export const authClient = createNextAuthClient();
 * await authClient.signIn.email({ email, password });
 * ```
 */
export function createPageAuthClient() {
  return createAuthClient({ plugins: [backendClient()] });
}

/**
 * The type of the default Better Auth client ({@link createPageAuthClient}); exported as
 * `NextAuthClient` and `StartAuthClient`.
 * @example
 * ```tsx
 * import { type NextAuthClient, useAuthClient } from "service-auth/nextjs/client";
 *
 * function SignOutButton() {
 *   const authClient: NextAuthClient = useAuthClient();
 *   return <button onClick={() => void authClient.signOut()}>Sign out</button>;
 * }
 * ```
 */
export type PageAuthClient = ReturnType<typeof createPageAuthClient>;

/** A socket for the server's render pass: it never opens, so nothing is sent or awaited. */
class UnopenedSocket implements WebSocketLike {
  readonly readyState = 0;
  onopen = null;
  onmessage = null;
  onclose = null;
  onerror = null;
  send(): void {}
  close(): void {}
}

const AuthClientContext = createContext<BetterAuthClientLike | null>(null);

/**
 * Props of {@link ServiceAuthProvider}: the backend URL the browser reaches, and optionally a
 * Better Auth client and backend client options.
 * @example
 * ```tsx
 * const props: ServiceAuthProviderProps = {
 *   url: process.env.SERVICE_AUTH_PUBLIC_URL ?? "http://127.0.0.1:3000",
 *   clientOptions: { onConnectionChange: (state) => console.log(state) },
 * };
 * <ServiceAuthProvider {...props}>{children}</ServiceAuthProvider>;
 * ```
 */
export interface ServiceAuthProviderProps {
  /** The backend's URL as the browser reaches it (its WebSocket endpoint is `/api/sync` there). */
  url: string;
  /**
   * A Better Auth client with the `backendClient()` plugin, for apps with more client plugins;
   * default {@link createPageAuthClient}'s. Must be made in a client module.
   */
  authClient?: BetterAuthClientLike;
  /** Options of the backend client (reconnect delays, connection state callback). */
  clientOptions?: Omit<BackendClientOptions, "WebSocket">;
  children?: ReactNode;
}

/**
 * Provides the `service-auth/react` hooks (`useQuery`, `usePreloadedQuery`, `useAuth`, …) and
 * {@link useAuthClient} to the app. Queries preloaded on the server show their data from the
 * first render; the client subscribes once the session's token is accepted.
 * @example
 * ```tsx
 * // app/layout.tsx (Next.js; TanStack Start: the root route, importing from service-auth/tanstack-start)
 * import { ServiceAuthProvider } from "service-auth/nextjs/client";
 *
 * export default function RootLayout({ children }: { children: ReactNode }) {
 *   return (
 *     <html lang="en">
 *       <body>
 *         <ServiceAuthProvider url={process.env.SERVICE_AUTH_URL!}>{children}</ServiceAuthProvider>
 *       </body>
 *     </html>
 *   );
 * }
 * ```
 */
export function ServiceAuthProvider({ url, authClient, clientOptions, children }: ServiceAuthProviderProps) {
  const [clients] = useState(() => ({
    // Lazy: React may discard this render and run the initializer again; only the committed
    // client's effects (subscriptions, `setAuth`) open its socket.
    backend: new BackendClient(url, {
      ...clientOptions,
      lazyConnect: true,
      WebSocket: typeof window === "undefined" ? UnopenedSocket : undefined,
    }),
    auth: authClient ?? createPageAuthClient(),
  }));
  return (
    <AuthClientContext.Provider value={clients.auth}>
      <BackendAuthProvider client={clients.backend} authClient={clients.auth}>
        {children}
      </BackendAuthProvider>
    </AuthClientContext.Provider>
  );
}

/**
 * The provider's Better Auth client, for sign-in and sign-out in client components. Typed as the
 * default client; pass the type of your own when you gave the provider one.
 * @example
 * ```tsx
 * "use client";
 * import { useAuthClient } from "service-auth/nextjs/client";
 *
 * function SignIn() {
 *   const authClient = useAuthClient();
 *   const signIn = (email: string, password: string) => authClient.signIn.email({ email, password });
 *   // …
 * }
 * ```
 */
export function useAuthClient<C extends BetterAuthClientLike = PageAuthClient>(): C {
  const client = useContext(AuthClientContext);
  if (!client) throw new Error("useAuthClient() must be used inside <ServiceAuthProvider>");
  return client as C;
}
