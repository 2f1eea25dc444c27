/**
 * Typed references for the browser: the types come from the server modules (type-only import,
 * erased from the bundle), the values are plain paths.
 */
import { anyApi } from "service-auth/client";
import type { ApiOf } from "service-auth/server";
import type { modules } from "../app.ts";

export const api: ApiOf<typeof modules> = anyApi;
