/**
 * The JWT of the request being rendered, from its cookies (`cookies()` of next/headers) by the
 * SSR caching rule of requirements §1.9: the `service-auth.jwt` cookie while it is fresh, else a new token
 * from the backend's token endpoint for the session cookie.
 */
import { cookies } from "next/headers.js";
import { bindingRequestToken } from "../client/server-binding.ts";
import { BINDING, type NextjsAuthOptions } from "./options.ts";

/**
 * The JWT for the current request; null when the user is not signed in (no session, or the
 * backend refused it). A token fetched here is not stored as a cookie: server components cannot
 * set cookies, and the browser's provider fetches (and stores) its own right after hydration.
 */
export async function requestToken(options: NextjsAuthOptions): Promise<string | null> {
  const store = await cookies();
  // `toString()` serializes every cookie as `name=value; …`, re-encoded as the browser sent it.
  const cookieHeader = store.toString();
  const headers = new Headers(cookieHeader ? { cookie: cookieHeader } : {});
  const { token } = await bindingRequestToken(options, BINDING, headers);
  return token;
}
