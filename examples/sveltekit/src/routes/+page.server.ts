/**
 * The page's data, loaded on the server with the request's JWT: signed in, the user's name and
 * the messages (preloaded, then live in the browser); signed out, nothing (the sign-in form).
 */
import { BackendCallError } from "service-auth/sveltekit";
import { api } from "../lib/api.ts";
import { auth } from "../lib/auth.server.ts";

export const load = async (event: { request: Request }) => {
  if (!(await auth.isAuthenticated(event))) return { user: null };
  try {
    const [me, messages] = await Promise.all([
      auth.fetchAuthQuery(event, api.users.me, {}),
      auth.preloadAuthQuery(event, api.messages.list, {}),
    ]);
    return { user: { name: me.username ?? me.name }, messages };
  } catch (error) {
    // A fresh JWT whose session was revoked meanwhile: signed out after all.
    if (error instanceof BackendCallError && error.code === "UNAUTHORIZED") return { user: null };
    throw error;
  }
};
