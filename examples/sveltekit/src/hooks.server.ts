/** `/api/auth/*` goes to the backend; a token fetched while rendering is kept as a cookie. */
import { auth } from "./lib/auth.server.ts";

export const handle = auth.handle;
