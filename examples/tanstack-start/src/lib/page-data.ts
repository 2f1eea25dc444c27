/**
 * Server functions the routes' loaders call: on the server render directly, on a client-side
 * navigation as one request to this app's server, which reads the JWT from the cookie.
 */
import { createServerFn } from "@tanstack/react-start";
import { BackendCallError } from "service-auth/tanstack-start/server";
import { api } from "./api.ts";
import { auth } from "./auth.server.ts";

/** The backend's address as the browser reaches it (its WebSocket); the server's by default. */
export const getBackendUrl = createServerFn().handler(() => {
  const url = process.env.SERVICE_AUTH_PUBLIC_URL ?? process.env.SERVICE_AUTH_URL;
  if (!url)
    throw new Error("Set SERVICE_AUTH_URL (and SERVICE_AUTH_PUBLIC_URL if browsers reach it elsewhere)");
  return url;
});

/** Signed in: the user's name and the messages (preloaded, then live in the browser); else null. */
export const getHome = createServerFn().handler(async () => {
  if (!(await auth.isAuthenticated())) return null;
  try {
    const [me, messages] = await Promise.all([
      auth.fetchAuthQuery(api.users.me, {}),
      auth.preloadAuthQuery(api.messages.list, {}),
    ]);
    return { name: me.username ?? me.name, messages };
  } catch (error) {
    // A fresh JWT whose session was revoked meanwhile: signed out after all.
    if (error instanceof BackendCallError && error.code === "UNAUTHORIZED") return null;
    throw error;
  }
});
