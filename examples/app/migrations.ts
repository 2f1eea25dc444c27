/**
 * Online migrations of the example app, run with `npm run cli -- migrate NAME` (docs/app-guide.md
 * "Changing the schema"). Each changes stored documents in place, batch by batch, while the app
 * serves.
 */
import { type DocOf, defineMigration } from "service-auth/server";
import type schema from "./schema.ts";

/**
 * Trims the whitespace around message bodies that older versions of `messages:send` stored as
 * typed (`--dry-run` first says how many would change).
 */
export const trimMessageBodies = defineMigration<DocOf<typeof schema, "messages">>({
  table: "messages",
  migrateOne: (doc) => (doc.body.trim() === doc.body ? undefined : { body: doc.body.trim() }),
});
