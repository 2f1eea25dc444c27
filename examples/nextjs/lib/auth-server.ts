/**
 * The server helpers, bound to the backend at `SERVICE_AUTH_URL` (read per request, so one build
 * serves any backend address).
 */
import { nextjsAuth } from "service-auth/nextjs";

export const auth = nextjsAuth();
