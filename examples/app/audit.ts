/**
 * The audit trail's internal functions: `audit:list` (the CLI's `audit` command), `audit:record`
 * (environment changes from the CLI) and `audit:prune` (the retention sweep). The events
 * themselves are written by the `auditTrail()` Better Auth plugin (auth-options.ts).
 */
import { createAuditFunctions } from "service-auth/auth";

export const { list, record, prune } = createAuditFunctions();
