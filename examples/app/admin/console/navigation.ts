/**
 * The console's navigation: one panel group at a time (users, keys, audit trail, jobs, variables)
 * instead of every panel on one long page. The tab is in the address (`#/audit`), so the back
 * button, a reload and a shared link keep it; the live queries of hidden panels keep running, so
 * a tab shows current data the moment it is opened.
 */
import { $ } from "./ui.ts";

export const TABS = ["users", "keys", "audit", "jobs", "env"] as const;
export type Tab = (typeof TABS)[number];

/** The tab an address names (`#/keys`), users for any other. */
export function tabOf(hash: string): Tab {
  const name = hash.replace(/^#\/?/, "");
  return (TABS as readonly string[]).includes(name) ? (name as Tab) : "users";
}

/** Shows `tab`'s panels and marks its link as the current page. */
function show(tab: Tab): void {
  const main = document.querySelector<HTMLElement>("main.console");
  if (!main || main.dataset.tab === tab) return;
  main.dataset.tab = tab;
  for (const link of document.querySelectorAll<HTMLAnchorElement>("#console-nav a[data-tab]")) {
    if (link.dataset.tab === tab) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  window.scrollTo(0, 0);
}

/** Follows the address: on load and on every tab link, back and forward. */
export function wireNavigation(): void {
  $("console-nav"); // present in the console view only
  window.addEventListener("hashchange", () => show(tabOf(location.hash)));
  show(tabOf(location.hash));
}
