/**
 * The `audit` command of the CLI: `npm run cli -- audit [--since 1h|ISO-time] [--until …]
 * [--user EMAIL|ID] [--type TYPE] [--limit N]` prints the matching events as JSON lines, oldest
 * first. An app exports it in `commands` with the reference of its `audit:list` function.
 */
import type { Backend, FunctionReference } from "service-auth/server";
import type { CommandIo } from "../cli.ts";
import { AUDIT_EVENT_TYPES } from "./events.ts";
import { MAX_AUDIT_PAGE } from "./query.ts";

const USAGE = `usage:
  cli audit [--since 1h|30m|7d|ISO-TIME] [--until …] [--user EMAIL|USER_ID] [--type TYPE] [--limit N]
types: ${AUDIT_EVENT_TYPES.join(", ")}`;

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A point in time: a duration back from `now` (`90m`, `1h`, `7d`), or an ISO date/time. */
export function parseTime(text: string, now = Date.now()): number {
  const ago = /^(\d{1,9})([smhd])$/.exec(text);
  if (ago) return now - Number(ago[1]) * UNITS[ago[2]];
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new Error(`not a time: ${text} (use e.g. 1h, 7d or 2026-01-31T12:00:00Z)`);
  return ms;
}

/** What the platform CLI hands an app command that needs the database. */
export type OpenBackend = () => Promise<Backend>;

/**
 * The `audit` command over the app's `audit:list` internal query.
 *
 * @example
 * ```ts
 * // app.ts: `npm run cli -- audit --since 1h --type sign-in.failed` prints matching events as JSON lines.
 * import { auditCommand } from "service-auth/auth";
 *
 * export const commands = {
 *   audit: auditCommand(internal.audit.list),
 * };
 * ```
 */
export function auditCommand(list: FunctionReference<"query"> | string) {
  return async (args: string[], io: CommandIo, openBackend?: OpenBackend): Promise<number> => {
    const filter: Record<string, string | number> = {};
    try {
      for (let i = 0; i < args.length; i++) {
        const flag = args[i];
        const value = args[i + 1];
        if (!["--since", "--until", "--user", "--type", "--limit"].includes(flag) || value === undefined)
          throw new Error(flag === "--help" ? "" : `unknown or incomplete option: ${flag}`);
        i++;
        if (flag === "--since" || flag === "--until") filter[flag.slice(2)] = parseTime(value);
        else if (flag === "--limit") filter.limit = Math.min(MAX_AUDIT_PAGE, Math.max(1, Number(value) || 1));
        else filter[flag.slice(2)] = value;
      }
    } catch (error) {
      const message = (error as Error).message;
      io.stderr(`${message ? `${message}\n` : ""}${USAGE}\n`);
      return 2;
    }
    if (!openBackend) throw new Error("the audit command needs the CLI's database access");
    const backend = await openBackend();
    const { value } = await backend.runQuery(list, filter, { allowInternal: true });
    const events = value as unknown[];
    for (const event of events.reverse()) io.stdout(`${JSON.stringify(event)}\n`);
    return 0;
  };
}

/**
 * The CLI's `onEnvChange` hook recording `env.changed` events through the app's `audit:record`:
 * the names changed, never the values.
 *
 * @example
 * ```ts
 * // app.ts: `env set|remove|sync` from the CLI lands in the audit trail (names only).
 * import { auditEnvChanges } from "service-auth/auth";
 *
 * export const app: ServiceOptions = {
 *   // …schema, modules, auth, routes…
 *   onEnvChange: auditEnvChanges(internal.audit.record),
 * };
 * ```
 */
export function auditEnvChanges(record: FunctionReference<"mutation"> | string) {
  return async (backend: Backend, change: { action: string; names: string[] }) => {
    await backend.runMutation(
      record,
      { type: "env.changed", details: { action: change.action, names: change.names, source: "cli" } },
      { allowInternal: true },
    );
  };
}
