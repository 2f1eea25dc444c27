/**
 * Better Auth client plugin exposing the backend token call:
 * `authClient.backend.getToken()` → the JWT for the current session, or null when signed out.
 */
import type { BetterAuthClientPlugin } from "better-auth/client";
import type { backend } from "../auth/plugins/backend/index.ts";

/**
 * Better Auth client plugin that adds `authClient.backend.getToken()`: the backend JWT for the
 * current session, or null when signed out.
 * @example
 * ```ts
 * import { createAuthClient } from "better-auth/client";
 * import { BackendClient, backendClient } from "service-auth/client";
 *
 * const authClient = createAuthClient({ baseURL: location.origin, plugins: [backendClient()] });
 * const backend = new BackendClient(location.origin);
 * backend.setAuth(() => authClient.backend.getToken());
 * ```
 */
export const backendClient = () =>
  ({
    id: "backend",
    $InferServerPlugin: {} as ReturnType<typeof backend>,
    pathMethods: { "/backend/token": "GET", "/backend/jwks": "GET" },
    getActions: ($fetch) => ({
      backend: {
        /** A fresh JWT (also set as the `service-auth.jwt` cookie); null when there is no valid session. */
        getToken: async (): Promise<string | null> => {
          const res = await $fetch<{ token: string }>("/backend/token", { method: "GET" });
          if (res.error) {
            if (res.error.status === 401 || res.error.status === 403) return null;
            throw new Error(`token request failed with ${res.error.status}`);
          }
          return res.data?.token ?? null;
        },
      },
    }),
  }) satisfies BetterAuthClientPlugin;
