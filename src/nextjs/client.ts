"use client";
/**
 * `service-auth/nextjs/client`: the client side of a Next.js App Router app — the provider
 * (render it in the root layout) and the Better Auth client it holds. The hooks come from
 * `service-auth/react`.
 */

export type { NextAuthClient, ServiceAuthProviderProps } from "./provider.tsx";
export { createNextAuthClient, ServiceAuthProvider, useAuthClient } from "./provider.tsx";
