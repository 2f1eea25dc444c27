/**
 * The console view: the live users list (search, paging), the selected user's panel (role, ban,
 * impersonation, removal, live sessions with revoke), the live signing keys, the audit trail, the
 * scheduler's jobs with their states, and the env names.
 * Lists come from the platform's live queries (`admin:*`); changes go to Better Auth's admin
 * endpoints, and the lists update themselves from the resulting commits.
 */
import type { AdminKeyRow, AdminSessionRow, AdminUserRow, AuditEventView } from "service-auth/app";
import type { LiveConnection, ScheduledJobView } from "service-auth/server";
import { auditRow } from "./audit-row.ts";
import { api, authClient, backend, consoleApi } from "./clients.ts";
import { wireNavigation } from "./navigation.ts";
import { addressText, clientText } from "./session-facts.ts";
import { $, el, pending, refreshTimes, status, timeAgo, when } from "./ui.ts";

const PAGE_SIZE = 20;
/** Audit events the console shows at once (newest first). */
const AUDIT_PAGE = 100;
/** Scheduled jobs the console shows at once (newest first). */
const JOBS_PAGE = 50;

interface UsersPage {
  page: AdminUserRow[];
  isDone: boolean;
  continueCursor: string;
}

/** Paging state: the cursor of each page visited so far (page 1 starts at null). */
let search = "";
let cursors: (string | null)[] = [null];
let lastPage: UsersPage | undefined;
let stopUsers: (() => void) | undefined;

let selected: AdminUserRow | undefined;
let stopSessions: (() => void) | undefined;
let stopAudit: (() => void) | undefined;
let stopConnections: (() => void) | undefined;
let stopJobs: (() => void) | undefined;
/** The selected user's sessions and live connections, rendered together. */
let lastSessions: AdminSessionRow[] = [];
let lastConnections: LiveConnection[] = [];

/** Signed out, banned or demoted while the console is open: say so and stop showing data. */
function lostAccess(message: string): void {
  const banner = $("banner");
  banner.textContent = message;
  banner.hidden = false;
  stopUsers?.();
  stopSessions?.();
  stopConnections?.();
  stopAudit?.();
  stopJobs?.();
  $("audit").replaceChildren();
  $("jobs").replaceChildren();
  $("users").replaceChildren();
  $("sessions").replaceChildren();
  $("user-panel").hidden = true;
  for (const button of document.querySelectorAll<HTMLButtonElement>("main button")) button.disabled = true;
}

function onQueryError(error: { code?: string; message: string }): void {
  if (error.code === "FORBIDDEN")
    lostAccess("Your account is no longer an administrator's. Reload to continue.");
  else if (error.code === "UNAUTHORIZED" || error.code === "ACCOUNT_BANNED")
    lostAccess("You were signed out. Reload the page to sign in again.");
  else status("users-status", error.message, "error");
}

function watchUsers(): void {
  stopUsers?.();
  status("users-status", "Loading…");
  const cursor = cursors[cursors.length - 1];
  stopUsers = backend.subscribe(
    api.admin.users,
    { search, cursor, numItems: PAGE_SIZE },
    (page: UsersPage) => renderUsers(page),
    onQueryError,
  );
}

function badge(text: string, kind: string): HTMLElement {
  return el("span", text, { class: `badge ${kind}` });
}

function renderUsers(page: UsersPage): void {
  lastPage = page;
  const items = page.page.map((user) => {
    const button = el("button", "", {
      type: "button",
      class: "user-row",
      "data-user-id": user._id,
      "aria-current": String(user._id === selected?._id),
    }) as HTMLButtonElement;
    const name = el("b", user.name);
    const badges = el("span");
    if (user.role?.split(",").includes("admin")) badges.append(badge("admin", "admin"));
    if (user.banned) badges.append(" ", badge("banned", "banned"));
    const created = el("span", "signed up ", { class: "email" });
    created.append(timeAgo(user.createdAt));
    button.append(name, badges, el("span", user.email, { class: "email" }), created);
    button.addEventListener("click", () => select(user));
    const li = el("li");
    li.append(button);
    return li;
  });
  $("users").replaceChildren(...items);
  status("users-status", page.page.length ? "" : search ? "No user matches." : "No users yet.");
  $<HTMLButtonElement>("prev-page").disabled = cursors.length === 1;
  $<HTMLButtonElement>("next-page").disabled = page.isDone;
  $("page-label").textContent = `Page ${cursors.length}`;
  // The open user's facts follow the live list (role, ban) while they are on this page.
  const fresh = selected && page.page.find((u) => u._id === selected?._id);
  if (fresh) renderUser(fresh);
}

function select(user: AdminUserRow): void {
  const changed = user._id !== selected?._id;
  renderUser(user);
  if (changed) {
    status("user-status", "");
    $("remove-confirm").hidden = true;
    stopSessions?.();
    stopConnections?.();
    lastSessions = [];
    lastConnections = [];
    stopSessions = backend.subscribe(
      api.admin.sessions,
      { userId: user._id },
      (sessions: AdminSessionRow[]) => {
        lastSessions = sessions;
        renderSessions();
      },
      onQueryError,
    );
    stopConnections = backend.subscribe(
      api.admin.connections,
      { userId: user._id },
      (connections: LiveConnection[]) => {
        lastConnections = connections;
        renderSessions();
      },
      onQueryError,
    );
  }
  if (lastPage) renderUsers(lastPage);
  revealUser();
}

/**
 * Brings the chosen user's details to the reader: on a phone the panel sits below the list, out
 * of sight, so the page scrolls to the panel's top; side by side on a wide screen nothing moves
 * unless the panel is out of sight.
 */
function revealUser(): void {
  const panel = $("user-panel");
  const { top, bottom } = panel.getBoundingClientRect();
  const stacked = top >= $("users-panel").getBoundingClientRect().bottom;
  if (stacked || top < 0 || bottom < 0 || top > window.innerHeight) panel.scrollIntoView({ block: "start" });
  $("user-title").focus({ preventScroll: true });
}

function renderUser(user: AdminUserRow): void {
  selected = user;
  $("user-panel").hidden = false;
  $("user-title").textContent = user.name;
  $("user-facts").replaceChildren(
    `${user.email} · role ${user.role ?? "user"} · signed up `,
    timeAgo(user.createdAt),
  );
  const role = $<HTMLSelectElement>("role-select");
  const roleValue = user.role ?? "user";
  if (![...role.options].some((o) => o.value === roleValue)) role.append(new Option(roleValue, roleValue));
  if (document.activeElement !== role) role.value = roleValue;
  $("ban-form").hidden = user.banned;
  $("banned-row").hidden = !user.banned;
  $("ban-facts").textContent = user.banned
    ? `Banned: ${user.banReason ?? "no reason"}${user.banExpires ? `, until ${when(user.banExpires)}` : ""}`
    : "";
}

/** One open WebSocket of a session, in words: since when, from where, which client, what it watches. */
function connectionLine(c: LiveConnection): HTMLElement {
  const li = el("li", "", { class: "meta connection", "data-connection-id": c._id });
  const since = el("span", "open since ");
  since.append(timeAgo(c.openedAt));
  li.append(
    since,
    ` · ${addressText(c.clientIp)} · `,
    el("span", clientText(c.userAgent), { title: c.userAgent ?? "" }),
    ` · ${c.subscriptions} subscription(s) · instance ${c.instanceId.slice(0, 8)}`,
  );
  return li;
}

/**
 * One row per session: browser and OS (the raw user agent in the tooltip), the client address,
 * when it signed in and when it expires, a marker on the administrator's own session, and its
 * live connections on every instance with a switch that closes them.
 */
function renderSessions(): void {
  const sessions = lastSessions;
  const items = sessions.map((s) => {
    const li = el("li", "", { class: "session", "data-session-id": s._id });
    const meta = el("div", "", { class: "meta" });
    const client = el("b", clientText(s.userAgent), { class: "client", title: s.userAgent ?? "" });
    const title = el("div");
    title.append(client);
    if (s.current) title.append(" ", badge("this session", "current"));
    if (s.impersonatedBy) title.append(" ", badge("impersonation", "imp"));
    // One span per fact: a narrow screen breaks the line between facts, not inside one.
    const signedIn = el("span", "signed in ");
    signedIn.append(timeAgo(s.createdAt));
    const expires = el("span", "expires ");
    expires.append(timeAgo(s.expiresAt));
    const facts = el("div", "", { class: "facts" });
    facts.append(el("span", addressText(s.ipAddress)), " · ", signedIn, " · ", expires);
    const open = lastConnections.filter((c) => c.sessionId === s._id);
    const connections = el("ul", "", { class: "list connections" });
    connections.append(...open.map(connectionLine));
    meta.append(
      title,
      facts,
      el("div", `${open.length} live connection(s)`, { class: "live-count" }),
      connections,
    );
    const disconnect = el("button", "Disconnect", {
      type: "button",
      class: "disconnect compact",
    }) as HTMLButtonElement;
    disconnect.disabled = open.length === 0;
    disconnect.title = "Close its live connections everywhere; its clients may reconnect";
    disconnect.addEventListener("click", () =>
      pending(
        disconnect,
        "user-status",
        () => backend.mutation(api.admin.disconnect, { sessionId: s._id }),
        "Live connections closed; the session stays signed in.",
      ),
    );
    const revoke = el("button", "Revoke", {
      type: "button",
      class: "danger compact",
      "aria-label": s.current ? "Revoke this session (signs you out)" : `Revoke ${clientText(s.userAgent)}`,
    }) as HTMLButtonElement;
    revoke.addEventListener("click", () => revokeSession(revoke, s._id));
    const buttons = el("span", "", { class: "row" });
    buttons.append(disconnect, revoke);
    li.append(meta, buttons);
    return li;
  });
  $("sessions").replaceChildren(...(items.length ? items : [el("li", "No sessions.", { class: "meta" })]));
  $<HTMLButtonElement>("revoke-all").disabled = sessions.length === 0;
}

/** Better Auth revokes by session token, which the live list never carries: look it up when asked. */
async function revokeSession(button: HTMLButtonElement, sessionId: string): Promise<void> {
  const userId = selected?._id as string;
  await pending(
    button,
    "user-status",
    async () => {
      const listed = await authClient.admin.listUserSessions({ userId });
      if (listed.error) return listed;
      const session = listed.data?.sessions.find((s) => s.id === sessionId);
      if (!session) throw new Error("That session has already ended.");
      return authClient.admin.revokeUserSession({ sessionToken: session.token });
    },
    "Session revoked.",
  );
}

function wireUserPanel(): void {
  const userId = () => selected?._id as string;
  $("role-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const button = (event.target as HTMLFormElement).querySelector("button") as HTMLButtonElement;
    const role = $<HTMLSelectElement>("role-select").value as "user" | "admin";
    void pending(
      button,
      "user-status",
      () => authClient.admin.setRole({ userId: userId(), role }),
      "Role set.",
    );
  });
  $("ban-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const data = new FormData(form);
    const button = form.querySelector("button") as HTMLButtonElement;
    const expires = Number(data.get("expires")) || undefined;
    const banReason = String(data.get("reason") ?? "").trim() || undefined;
    void pending(
      button,
      "user-status",
      async () => {
        const res = await authClient.admin.banUser({ userId: userId(), banReason, banExpiresIn: expires });
        if (!res.error) form.reset();
        return res;
      },
      "User banned; their sessions ended.",
    );
  });
  const unban = $<HTMLButtonElement>("unban");
  unban.addEventListener("click", () =>
    pending(unban, "user-status", () => authClient.admin.unbanUser({ userId: userId() }), "User unbanned."),
  );
  const impersonate = $<HTMLButtonElement>("impersonate");
  impersonate.addEventListener("click", async () => {
    const res = await pending(impersonate, "user-status", () =>
      authClient.admin.impersonateUser({ userId: userId() }),
    );
    // The browser's session is now the user's: show the app as they see it.
    if (res) location.assign("/");
  });
  const remove = $<HTMLButtonElement>("remove");
  const confirm = $<HTMLButtonElement>("remove-confirm");
  remove.addEventListener("click", () => {
    confirm.hidden = false;
    confirm.focus();
  });
  confirm.addEventListener("click", async () => {
    const res = await pending(confirm, "user-status", () =>
      authClient.admin.removeUser({ userId: userId() }),
    );
    if (!res) return;
    confirm.hidden = true;
    stopSessions?.();
    stopConnections?.();
    selected = undefined;
    $("user-panel").hidden = true;
    status("users-status", "User removed.", "ok");
    $("search-input").focus();
  });
  const revokeAll = $<HTMLButtonElement>("revoke-all");
  revokeAll.addEventListener("click", () =>
    pending(
      revokeAll,
      "user-status",
      () => authClient.admin.revokeUserSessions({ userId: userId() }),
      "All sessions revoked.",
    ),
  );
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || $("user-panel").hidden) return;
    const back = document.querySelector<HTMLElement>(`[data-user-id="${selected?._id}"]`);
    stopSessions?.();
    stopConnections?.();
    selected = undefined;
    $("user-panel").hidden = true;
    back?.focus();
  });
}

function wireUsersList(): void {
  let debounce: ReturnType<typeof setTimeout> | undefined;
  const input = $<HTMLInputElement>("search-input");
  const apply = () => {
    if (input.value.trim() === search) return;
    search = input.value.trim();
    cursors = [null];
    watchUsers();
  };
  input.addEventListener("input", () => {
    clearTimeout(debounce);
    debounce = setTimeout(apply, 250);
  });
  $("search").addEventListener("submit", (event) => {
    event.preventDefault();
    clearTimeout(debounce);
    apply();
  });
  $("next-page").addEventListener("click", () => {
    if (!lastPage || lastPage.isDone) return;
    cursors.push(lastPage.continueCursor);
    watchUsers();
  });
  $("prev-page").addEventListener("click", () => {
    if (cursors.length === 1) return;
    cursors.pop();
    watchUsers();
  });
}

function renderKeys(keys: AdminKeyRow[]): void {
  $("keys").replaceChildren(
    ...keys.map((k) => {
      const li = el("li", "", { class: "key" });
      const created = el("span", "created ", { class: "meta" });
      created.append(timeAgo(k.createdAt));
      const state =
        k.state === "retiring" && k.expiresAt !== undefined
          ? `retiring: verifies old tokens until ${new Date(k.expiresAt).toLocaleString()}, then removed`
          : k.state;
      li.append(el("code", k.kid), created, el("span", ` ${state}`, { class: "meta key-state" }));
      return li;
    }),
  );
}

function wireKeys(): void {
  backend.subscribe(api.admin.keys, {}, renderKeys, onQueryError);
  const rotate = $<HTMLButtonElement>("rotate");
  const confirm = $<HTMLButtonElement>("rotate-confirm");
  rotate.addEventListener("click", () => {
    confirm.hidden = false;
    confirm.focus();
  });
  confirm.addEventListener("click", async () => {
    await pending(
      confirm,
      "keys-status",
      () => consoleApi("rotate-keys", "POST"),
      "Keys rotated; clients refresh their tokens.",
    );
    confirm.hidden = true;
  });
  const graceful = $<HTMLButtonElement>("rotate-graceful");
  graceful.addEventListener("click", async () => {
    await pending(
      graceful,
      "keys-status",
      () => consoleApi("rotate-keys-gracefully", "POST"),
      "New key signs now; the old one verifies until its tokens expire, then it is removed.",
    );
  });
}

async function loadEnv(button: HTMLButtonElement): Promise<void> {
  const value = await pending(button, "env-status", () => consoleApi<{ names: string[] }>("env"));
  if (!value) return;
  const items = value.names.map((name) => {
    const li = el("li");
    li.append(el("code", name));
    return li;
  });
  $("env").replaceChildren(...(items.length ? items : [el("li", "No stored variables.", { class: "meta" })]));
}

function renderAudit(events: AuditEventView[]): void {
  const items = events.map((e) => auditRow(e, badge));
  $("audit").replaceChildren(...items);
  status("audit-status", events.length ? `${events.length} event(s), newest first` : "No events match.");
}

/** Subscribes to the audit trail with the filter form's values (user, type, time). */
function watchAudit(): void {
  stopAudit?.();
  const form = new FormData($<HTMLFormElement>("audit-filter"));
  const user = String(form.get("user") ?? "").trim();
  const type = String(form.get("type") ?? "");
  const seconds = Number(form.get("since"));
  const args = {
    limit: AUDIT_PAGE,
    ...(user ? { user } : {}),
    ...(type ? { type } : {}),
    ...(seconds > 0 ? { since: Date.now() - seconds * 1000 } : {}),
  };
  status("audit-status", "Loading…");
  stopAudit = backend.subscribe(api.admin.audit, args, renderAudit, (error) => {
    if (error.code === "BAD_REQUEST") status("audit-status", error.message, "error");
    else onQueryError(error);
  });
}

function wireAudit(): void {
  let debounce: ReturnType<typeof setTimeout> | undefined;
  const form = $<HTMLFormElement>("audit-filter");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    clearTimeout(debounce);
    watchAudit();
  });
  $("audit-user").addEventListener("input", () => {
    clearTimeout(debounce);
    debounce = setTimeout(watchAudit, 250);
  });
  $("audit-type").addEventListener("change", watchAudit);
  $("audit-since").addEventListener("change", watchAudit);
  watchAudit();
}

/** One job in words: function, state (with its error), due / finished, and the cron behind it. */
function renderJobs(jobs: ScheduledJobView[]): void {
  const items = jobs.map((job) => {
    const li = el("li", "", { class: "job", "data-job-id": job._id, "data-job-state": job.state });
    const head = el("span");
    head.append(badge(job.state, `job-state ${job.state}`), " ", el("code", job.name));
    const facts = el("span", "", { class: "meta" });
    const time = job.finishedAt ?? job.startedAt ?? job.runAt;
    const verb = job.finishedAt ? "finished" : job.startedAt ? "started" : "due";
    facts.append(`${verb} `, timeAgo(time), job.cron ? ` · cron "${job.cron}"` : "");
    li.append(head, facts);
    if (job.error) li.append(el("span", job.error, { class: "details job-error" }));
    return li;
  });
  $("jobs").replaceChildren(...items);
  status("jobs-status", jobs.length ? `${jobs.length} job(s), newest first` : "No jobs.");
}

/** Subscribes to the scheduler's jobs in the chosen state. */
function watchJobs(): void {
  stopJobs?.();
  const state = $<HTMLSelectElement>("jobs-state").value;
  stopJobs = backend.subscribe(
    api.admin.jobs,
    { limit: JOBS_PAGE, ...(state ? { state } : {}) },
    renderJobs,
    onQueryError,
  );
}

function wireJobs(): void {
  $("jobs-state").addEventListener("change", watchJobs);
  watchJobs();
}

/** Starts the console view: identity, live lists and every control. */
export function startConsole(): void {
  backend.setAuth(
    () => authClient.backend.getToken(),
    (authenticated) => {
      if (!authenticated) lostAccess("You were signed out. Reload the page to sign in again.");
    },
  );
  backend.subscribe(
    api.admin.viewer,
    {},
    (viewer: { email: string }) => {
      $("viewer").textContent = viewer.email;
    },
    onQueryError,
  );
  wireNavigation();
  wireUsersList();
  wireUserPanel();
  wireKeys();
  wireAudit();
  wireJobs();
  const refresh = $<HTMLButtonElement>("env-refresh");
  refresh.addEventListener("click", () => loadEnv(refresh));
  void loadEnv(refresh);
  watchUsers();
  // "just now" becomes "1 minute ago" without a change to the rows.
  setInterval(refreshTimes, 30_000);
  const signOut = $<HTMLButtonElement>("sign-out");
  signOut.addEventListener("click", async () => {
    await pending(signOut, "users-status", () => authClient.signOut());
    backend.clearAuth();
    location.assign("/");
  });
}
