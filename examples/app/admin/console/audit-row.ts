/**
 * An audit event as the console shows it, read like a session row: who did what to whom, the
 * browser and OS in words (the raw user agent in the tooltip), the address, when; and its details
 * as labelled fields, times as dates, never raw JSON or epoch milliseconds.
 */
import type { AuditEventView } from "service-auth/app";
import { addressText, clientText } from "./session-facts.ts";
import { el, timeAgo, when } from "./ui.ts";

/** Labels of the detail fields the auth integration records; others are spelled out from the key. */
const LABELS: Record<string, string> = {
  method: "Through",
  reason: "Reason",
  status: "HTTP status",
  sessionId: "Session",
  role: "Role",
  expires: "Expires",
  createdBy: "Created by",
  by: "By",
  source: "From",
  action: "Action",
  names: "Variables",
};

/** `createdAt` → "Created at", `retireAt` → "Retire at". */
function labelOf(key: string): string {
  if (LABELS[key]) return LABELS[key];
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/[_-]+/g, " ")
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Epoch milliseconds between 2001 and 2286: a time, whatever the key is called. */
const looksLikeTime = (key: string, value: unknown): value is number =>
  typeof value === "number" &&
  Number.isFinite(value) &&
  (/(?:At|expires|Expires|time|Time)$/.test(key) || (value > 1e12 && value < 1e13));

/** A detail's value as words and dates. */
function detailValue(key: string, value: unknown): Node | string {
  if (value === null || value === undefined || value === "") return key === "expires" ? "never" : "none";
  if (looksLikeTime(key, value)) {
    const node = el("span");
    node.append(timeAgo(value), ` (${when(value)})`);
    return node;
  }
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (Array.isArray(value)) return value.map(String).join(", ") || "none";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** "who → whom" of an event, in words. */
function parties(e: AuditEventView): string {
  const actor = e.actorEmail ?? e.actorId;
  const target = e.targetEmail ?? e.email ?? e.targetId;
  if (!actor) return target ?? "—";
  return target && target !== actor ? `${actor} → ${target}` : actor;
}

/** One `<li>` of the audit list. */
export function auditRow(e: AuditEventView, badge: (text: string, kind: string) => HTMLElement): HTMLElement {
  const li = el("li", "", { class: "event", "data-event-type": e.type, "data-event-id": e._id });
  const head = el("div");
  head.append(badge(e.type, "event-type"), " ", el("span", parties(e), { class: "parties" }));
  // One span per fact: a narrow screen breaks the line between facts, not inside one.
  const facts = el("div", "", { class: "meta facts" });
  // No request behind it (a CLI command, a scheduled job): say so rather than "unknown" twice.
  if (!e.userAgent && !e.ipAddress)
    facts.append(el("span", "no request (CLI or server)"), " · ", timeAgo(e.time));
  else
    facts.append(
      el("span", clientText(e.userAgent), { class: "client", title: e.userAgent ?? "" }),
      " · ",
      el("span", addressText(e.ipAddress)),
      " · ",
      timeAgo(e.time),
    );
  li.append(head, facts);
  const entries = Object.entries(e.details);
  if (entries.length > 0) {
    const fields = el("dl", "", { class: "fields" });
    for (const [key, value] of entries) {
      const dd = el("dd");
      dd.append(detailValue(key, value));
      fields.append(el("dt", labelOf(key)), dd);
    }
    li.append(fields);
  }
  return li;
}
