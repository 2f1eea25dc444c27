import { publicBackendUrl } from "../lib/auth.server.ts";

/** Rendered per request: the backend URL is read at run time, not baked in by the build. */
export const load = () => ({ backendUrl: publicBackendUrl() });
