/** Typed references to the backend's functions (examples/app): types only, the values are paths. */
import { anyApi } from "service-auth/client";
import type { ApiOf } from "service-auth/server";
import type { modules } from "../../../app/app.ts";

export const api: ApiOf<typeof modules> = anyApi;
