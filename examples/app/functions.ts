/** Function builders typed by this app's schema. */
import { functionsFor } from "service-auth/server";
import schema from "./schema.ts";

export const { query, mutation, action, internalQuery, internalMutation, internalAction } = functionsFor(schema);
