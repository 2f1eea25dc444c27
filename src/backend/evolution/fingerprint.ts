/** The fingerprint of a table's validator: equal fingerprints accept exactly the same documents. */
import { createHash } from "node:crypto";
import { stableStringify } from "../../protocol/stable-stringify.ts";
import type { TableDefinition } from "../schema.ts";

/**
 * Bumped when the meaning of a validator changes in the platform (say, `v.number()` starts
 * refusing something it accepted), so every table is checked again once.
 */
const VALIDATION_VERSION = 1;

/** sha256 of the table's field validators (key order does not matter; indexes do not count). */
export function validatorFingerprint(table: TableDefinition): string {
  return createHash("sha256")
    .update(stableStringify({ version: VALIDATION_VERSION, fields: table.fields }))
    .digest("base64url");
}
