"use client";
/**
 * The client provider of a Next.js app (the shared one of `src/react`): one backend client and one
 * Better Auth client (on the Next origin, whose `/api/auth/*` route handler fronts the backend)
 * per page load. Server rendering renders only, so there the backend client never connects.
 */
export type {
  PageAuthClient as NextAuthClient,
  ServiceAuthProviderProps,
} from "../react/service-auth-provider.tsx";
export {
  createPageAuthClient as createNextAuthClient,
  ServiceAuthProvider,
  useAuthClient,
} from "../react/service-auth-provider.tsx";
