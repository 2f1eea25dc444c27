/** Better Auth's endpoints on this origin, proxied to the backend. */
import { createFileRoute } from "@tanstack/react-router";
import { auth } from "../../../lib/auth.server.ts";

export const Route = createFileRoute("/api/auth/$")({ server: { handlers: auth.handlers } });
