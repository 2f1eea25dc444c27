/** The example application: schema, function modules and HTTP routes, as the server and CLI load it. */
import type { ServiceOptions } from "service-auth/server";
import * as messages from "./messages.ts";
import schema from "./schema.ts";

export const modules = { messages };

export const app: ServiceOptions = { schema, modules };
