/** The console's clients: Better Auth (with the admin endpoints) and the live backend connection. */
import { createAuthClient } from "better-auth/client";
import { adminClient } from "better-auth/client/plugins";
import { anyApi, BackendClient, backendClient } from "service-auth/client";
import type { ApiOf } from "service-auth/server";
import type { modules } from "../../app.ts";

export const api: ApiOf<typeof modules> = anyApi;

export const authClient = createAuthClient({
  baseURL: location.origin,
  plugins: [backendClient(), adminClient()],
});

export const backend = new BackendClient(`${location.origin.replace(/^http/, "ws")}/api/sync`);

/** Calls one of the console's server routes (`/admin/api/*`) with the session's JWT. */
export async function consoleApi<T>(path: string, method: "GET" | "POST" = "GET"): Promise<T> {
  const token = await authClient.backend.getToken();
  if (!token) throw new Error("You were signed out");
  const res = await fetch(`/admin/api/${path}`, { method, headers: { authorization: `Bearer ${token}` } });
  const body = (await res.json().catch(() => ({}))) as { status?: string; value?: T; message?: string };
  if (body.status !== "success") throw new Error(body.message ?? `Request failed (${res.status})`);
  return body.value as T;
}
