/**
 * The audit trail's internal functions: `audit:list` (the CLI's `audit` command), `audit:record`
 * (environment changes from the CLI), `audit:prune` and `audit:sweep` (the retention cron's run,
 * app.ts). The events
 * themselves are written by the `auditTrail()` Better Auth plugin (auth-options.ts).
 */
import { type AuditFunctionRefs, createAuditFunctions } from "service-auth/auth";
import { anyApi } from "service-auth/server";

const self: AuditFunctionRefs = anyApi.audit;

export const { list, record, prune, sweep } = createAuditFunctions({ self });
