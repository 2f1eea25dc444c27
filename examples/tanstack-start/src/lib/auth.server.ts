/**
 * The server helpers, bound to the backend at `SERVICE_AUTH_URL` (read per request, so one build
 * serves any backend address).
 */
import { tanstackStartAuth } from "service-auth/tanstack-start/server";

export const auth = tanstackStartAuth();
