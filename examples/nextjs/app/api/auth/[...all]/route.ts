/** Better Auth's endpoints on the Next origin: every `/api/auth/*` request goes to the backend. */
import { auth } from "../../../../lib/auth-server.ts";

export const { GET, POST } = auth.handler;
