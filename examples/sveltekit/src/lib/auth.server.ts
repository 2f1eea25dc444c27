/**
 * The server helpers, bound to the backend at `SERVICE_AUTH_URL` (read per request, so one build
 * serves any backend address).
 */
import { sveltekitAuth } from "service-auth/sveltekit";

export const auth = sveltekitAuth();

/** The backend's address as the browser reaches it (its WebSocket); the server's by default. */
export function publicBackendUrl(): string {
  const url = process.env.SERVICE_AUTH_PUBLIC_URL ?? process.env.SERVICE_AUTH_URL;
  if (!url)
    throw new Error("Set SERVICE_AUTH_URL (and SERVICE_AUTH_PUBLIC_URL if browsers reach it elsewhere)");
  return url;
}
