/** Small DOM helpers of the admin console: elements, dates, pending buttons and status lines. */
import { relativeTime } from "./session-facts.ts";

export const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

/** An element with text and attributes (text only: nothing from the server becomes markup). */
export function el(tag: string, text = "", attributes: Record<string, string> = {}): HTMLElement {
  const node = document.createElement(tag);
  if (text) node.textContent = text;
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

export const when = (ms: number | null | undefined) => (ms ? new Date(ms).toLocaleString() : "—");

/**
 * A `<time>` saying how long ago (or how soon) `ms` is, the exact time in its tooltip; kept
 * current by {@link refreshTimes}.
 */
export function timeAgo(ms: number | null | undefined): HTMLElement {
  if (!ms) return el("span", "—");
  const node = el("time", relativeTime(ms, Date.now()), {
    datetime: new Date(ms).toISOString(),
    title: when(ms),
    "data-at": String(ms),
  });
  return node;
}

/** Rewrites every {@link timeAgo} on the page for the current time ("just now" becomes "1 minute ago"). */
export function refreshTimes(): void {
  const now = Date.now();
  for (const node of document.querySelectorAll<HTMLElement>("time[data-at]"))
    node.textContent = relativeTime(Number(node.dataset.at), now);
}

/** Shows `message` in the status line `id` (an error in red, otherwise a confirmation). */
export function status(id: string, message: string, kind: "error" | "ok" | "" = ""): void {
  const line = $(id);
  line.textContent = message;
  line.className = `status ${kind}`;
}

/** A thrown value or Better Auth error as words for a person. */
export function messageOf(error: unknown): string {
  if (
    error &&
    typeof error === "object" &&
    "message" in error &&
    typeof error.message === "string" &&
    error.message
  )
    return error.message;
  return "Something went wrong; try again.";
}

/**
 * Runs `task` with `button` disabled and marked busy (no double submits), reporting failure in the
 * status line `statusId`. Better Auth's client answers `{ error }` instead of throwing; both count.
 */
export async function pending<T>(
  button: HTMLButtonElement,
  statusId: string,
  task: () => Promise<T>,
  done?: string,
): Promise<T | undefined> {
  button.disabled = true;
  button.setAttribute("aria-busy", "true");
  status(statusId, "Working…");
  try {
    const result = await task();
    const error = (result as { error?: unknown } | undefined)?.error;
    if (error) throw error;
    status(statusId, done ?? "", done ? "ok" : "");
    return result;
  } catch (error) {
    status(statusId, messageOf(error), "error");
    return undefined;
  } finally {
    button.disabled = false;
    button.removeAttribute("aria-busy");
  }
}
