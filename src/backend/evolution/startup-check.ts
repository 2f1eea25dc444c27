/**
 * The schema check at start: refuses to start when stored documents violate the schema, unless
 * the `SCHEMA_CHECK=warn` setting (or `schemaCheck: "warn"`) lets it start with a logged warning.
 */

import { logger } from "../logger.ts";
import type { BackendRuntime } from "../runtime.ts";
import { SettingError, settingProblem } from "../settings/problems.ts";
import {
  checkStoredDocuments,
  describeViolation,
  SCHEMA_FIX_HINT,
  SchemaCheckRefusal,
} from "./stored-check.ts";

/**
 * `refuse` (the default): violations stop the start; `warn`: they are logged and it starts.
 *
 * @example
 * ```ts
 * import type { SchemaCheckMode } from "service-auth/server";
 *
 * const schemaCheck: SchemaCheckMode = process.env.NODE_ENV === "production" ? "refuse" : "warn";
 * await startService({ ...app, schemaCheck });
 * ```
 */
export type SchemaCheckMode = "refuse" | "warn";

/**
 * `SCHEMA_CHECK` from the environment: unset is `refuse`; anything but the two values refuses to start.
 *
 * @example
 * ```ts
 * import { SettingsCheck, schemaCheckSetting, startService } from "service-auth/server";
 *
 * const check = new SettingsCheck();
 * // SCHEMA_CHECK=warn: documents that violate the schema are logged instead of refusing the start.
 * await startService({ ...app, schemaCheck: check.read(() => schemaCheckSetting()) });
 * ```
 */
export function schemaCheckSetting(env: Record<string, string | undefined> = process.env): SchemaCheckMode {
  const raw = env.SCHEMA_CHECK?.trim();
  if (!raw) return "refuse";
  if (raw === "refuse" || raw === "warn") return raw;
  throw new SettingError(
    settingProblem(
      "SCHEMA_CHECK",
      raw,
      'must be "refuse" or "warn"',
      "unset it (refuse), or set SCHEMA_CHECK=warn",
    ),
  );
}

/** Runs the check before the service serves; throws {@link SchemaCheckRefusal} in `refuse` mode. */
export async function checkSchemaAtStart(backend: BackendRuntime, mode: SchemaCheckMode): Promise<void> {
  const started = Date.now();
  const report = await checkStoredDocuments(backend);
  if (report.documents > 0) {
    logger.info("schema check: stored documents read", {
      tables: report.checked.length,
      documents: report.documents,
      ms: Date.now() - started,
    });
  }
  if (report.violations.length === 0) return;
  if (mode === "refuse") throw new SchemaCheckRefusal(report.violations);
  // Not recorded as verified: the next start checks (and warns) again.
  logger.warn("SCHEMA_CHECK=warn: starting although stored documents do not match the schema", {
    violations: report.violations.map(describeViolation),
    fix: SCHEMA_FIX_HINT,
  });
}
