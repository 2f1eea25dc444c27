/**
 * The admin console's page, one of three views chosen by the server: the console itself, the
 * sign-in form (not signed in) or "administrators only". The script fills in the live parts.
 */
import { AUDIT_EVENT_TYPES } from "service-auth/app";
export type ConsoleView = "console" | "sign-in" | "forbidden";

/** The event types the audit filter offers (the auth integration's list). */
const AUDIT_TYPES: readonly string[] = AUDIT_EVENT_TYPES;

const STYLE = `
  :root { --fg: #1d2330; --muted: #667; --line: #dde1e8; --accent: #2b4c7e; --bad: #b00020; --ok: #1b6e3a; }
  * { box-sizing: border-box; }
  body { font: 15px/1.45 system-ui, sans-serif; color: var(--fg); margin: 0; }
  header { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; justify-content: space-between;
    padding: .6rem 1rem; background: var(--accent); color: #fff; }
  header h1 { font-size: 1.15rem; margin: 0; }
  header a { color: #fff; }
  header button { color: #fff; background: transparent; border-color: #fff; }
  main { padding: 1rem; max-width: 72rem; margin: 0 auto; display: grid; gap: 1rem; }
  @media (min-width: 900px) { main.console { grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); }
    #keys-panel, #env-panel, #audit-panel, #jobs-panel { grid-column: 1 / -1; } }
  /* Stacked under the list, the last thing on the page: at least a screen tall, so choosing a user
     can scroll its details to the top of the screen. */
  @media (max-width: 899px) { #user-panel { min-height: calc(100vh - 1rem); } }
  nav.tabs { display: flex; gap: .15rem; overflow-x: auto; padding: .4rem .5rem 0; background: #f3f5f9;
    border-bottom: 1px solid var(--line); }
  nav.tabs a { padding: .5rem .6rem; color: var(--accent); text-decoration: none; white-space: nowrap;
    border: 1px solid transparent; border-bottom: 0; border-radius: 6px 6px 0 0; }
  nav.tabs a[aria-current=page] { background: #fff; border-color: var(--line); color: var(--fg); font-weight: 600;
    margin-bottom: -1px; }
  main.console > section[data-tab] { display: none; }
  main.console[data-tab=users] > section[data-tab=users], main.console[data-tab=keys] > section[data-tab=keys],
  main.console[data-tab=audit] > section[data-tab=audit], main.console[data-tab=jobs] > section[data-tab=jobs],
  main.console[data-tab=env] > section[data-tab=env] { display: block; }
  section { border: 1px solid var(--line); border-radius: 8px; padding: .8rem 1rem; min-width: 0; scroll-margin-top: .5rem; }
  h2 { font-size: 1.05rem; margin: 0 0 .6rem; }
  h3 { font-size: .95rem; margin: 1rem 0 .4rem; }
  form, .row { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .4rem 0; }
  input, select, button { font: inherit; }
  input, select { padding: .4rem; border: 1px solid #bbc; border-radius: 4px; min-width: 0; }
  input[type=search], input[type=email], input[type=password], input[name=reason] { flex: 1 1 12rem; }
  button { padding: .35rem .8rem; border: 1px solid var(--accent); border-radius: 4px; background: #fff;
    color: var(--accent); cursor: pointer; min-height: 2.2rem; }
  button.primary { background: var(--accent); color: #fff; }
  button.danger { border-color: var(--bad); color: var(--bad); }
  button:disabled { opacity: .55; cursor: progress; }
  :focus-visible { outline: 3px solid #f5a623; outline-offset: 2px; }
  ul.list { list-style: none; padding: 0; margin: 0; }
  ul.list > li { border-bottom: 1px solid var(--line); }
  ul.list > li:last-child { border-bottom: 0; }
  .user-row { display: grid; grid-template-columns: minmax(0, 1fr); gap: .1rem .6rem; width: 100%;
    text-align: left; border: 0; border-radius: 0; background: none; color: inherit; padding: .5rem .3rem; }
  @media (min-width: 600px) { .user-row { grid-template-columns: minmax(0, 1fr) auto; } }
  .user-row[aria-current=true] { background: #eef3fb; }
  .user-row .email, .meta { color: var(--muted); font-size: .88rem; overflow-wrap: anywhere; }
  .badge { display: inline-block; font-size: .75rem; padding: 0 .4rem; border-radius: 999px; border: 1px solid; }
  .badge.admin { color: var(--accent); } .badge.banned { color: var(--bad); } .badge.imp { color: #8a5a00; }
  .badge.current { color: #fff; background: var(--ok); border-color: var(--ok); }
  .session { display: flex; justify-content: space-between; align-items: center; gap: .6rem; padding: .45rem 0; }
  .session .meta { flex: 1 1 auto; min-width: 0; }
  .session .client { color: var(--fg); font-weight: 600; }
  .session .facts > span { display: inline-block; }
  .key { display: flex; flex-wrap: wrap; justify-content: space-between; gap: .2rem .8rem; padding: .45rem 0; }
  button.compact { min-height: 0; padding: .15rem .55rem; font-size: .85rem; flex: none; }
  code { font-size: .85rem; overflow-wrap: anywhere; }
  .status { min-height: 1.3em; margin: .3rem 0; font-size: .9rem; }
  .status.error { color: var(--bad); } .status.ok { color: var(--ok); }
  .event { display: grid; grid-template-columns: minmax(0, 1fr); gap: .15rem; padding: .5rem 0; font-size: .9rem; }
  .event .parties { overflow-wrap: anywhere; }
  .event .facts > span, .event .facts > time { display: inline-block; }
  .event dl.fields { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0 .8rem; margin: .2rem 0 0;
    font-size: .85rem; }
  .event dl.fields dt { color: var(--muted); }
  .event dl.fields dd { margin: 0; overflow-wrap: anywhere; }
  .badge.event-type { color: var(--fg); }
  .job { display: flex; flex-direction: column; gap: .15rem; }
  .badge.job-state.failed { color: var(--bad); } .badge.job-state.done { color: var(--ok); }
  .job .job-error { font-family: ui-monospace, monospace; font-size: .8rem; color: var(--bad); overflow-wrap: anywhere; }
  .banner { background: #fff4e5; border: 1px solid #f0c27b; padding: .6rem 1rem; border-radius: 6px; }
  .narrow { max-width: 28rem; margin: 2rem auto; }
  [hidden] { display: none !important; }
`;

const BODY: Record<ConsoleView, string> = {
  console: `
  <header>
    <h1>Admin console</h1>
    <span>Signed in as <b id="viewer"></b> · <a href="/">App</a>
      <button id="sign-out" type="button">Sign out</button></span>
  </header>
  <nav id="console-nav" class="tabs" aria-label="Console sections">
    <a href="#/users" data-tab="users" aria-current="page">Users</a>
    <a href="#/keys" data-tab="keys">Keys</a>
    <a href="#/audit" data-tab="audit">Audit</a>
    <a href="#/jobs" data-tab="jobs">Jobs</a>
    <a href="#/env" data-tab="env">Variables</a>
  </nav>
  <p class="banner" id="banner" role="alert" hidden></p>
  <main class="console" data-tab="users">
    <section id="users-panel" data-tab="users" aria-labelledby="users-title">
      <h2 id="users-title">Users</h2>
      <form id="search" role="search">
        <label for="search-input" class="meta">Search name or email</label>
        <input id="search-input" name="search" type="search" placeholder="Search name or email" maxlength="200" autocomplete="off" />
      </form>
      <p class="status" id="users-status" aria-live="polite">Loading…</p>
      <ul class="list" id="users"></ul>
      <div class="row">
        <button id="prev-page" type="button" disabled>Previous</button>
        <span id="page-label" class="meta">Page 1</span>
        <button id="next-page" type="button" disabled>Next</button>
      </div>
    </section>
    <section id="user-panel" data-tab="users" aria-labelledby="user-title" hidden>
      <h2 id="user-title" tabindex="-1"></h2>
      <p class="meta" id="user-facts"></p>
      <p class="status" id="user-status" role="status" aria-live="polite"></p>
      <form id="role-form">
        <label for="role-select">Role</label>
        <select id="role-select" name="role"><option value="user">user</option><option value="admin">admin</option></select>
        <button type="submit">Set role</button>
      </form>
      <form id="ban-form">
        <input name="reason" placeholder="Ban reason" maxlength="200" aria-label="Ban reason" />
        <select name="expires" aria-label="Ban expires">
          <option value="">never expires</option><option value="3600">1 hour</option>
          <option value="86400">1 day</option><option value="604800">7 days</option><option value="2592000">30 days</option>
        </select>
        <button type="submit" class="danger">Ban</button>
      </form>
      <div class="row" id="banned-row" hidden>
        <span id="ban-facts" class="meta"></span>
        <button id="unban" type="button">Unban</button>
      </div>
      <div class="row">
        <button id="impersonate" type="button">Impersonate</button>
        <button id="remove" type="button" class="danger">Remove user…</button>
        <button id="remove-confirm" type="button" class="danger" hidden>Really remove</button>
      </div>
      <h3>Sessions</h3>
      <ul class="list" id="sessions"></ul>
      <div class="row"><button id="revoke-all" type="button" class="danger">Revoke all sessions</button></div>
    </section>
    <section id="keys-panel" data-tab="keys" aria-labelledby="keys-title">
      <h2 id="keys-title">Signing keys</h2>
      <ul class="list" id="keys"></ul>
      <p class="status" id="keys-status" aria-live="polite"></p>
      <div class="row"><button id="rotate-graceful" type="button">Rotate gracefully</button>
        <button id="rotate" type="button">Rotate keys…</button>
        <button id="rotate-confirm" type="button" class="danger" hidden>Rotate now (all tokens refresh)</button></div>
    </section>
    <section id="audit-panel" data-tab="audit" aria-labelledby="audit-title">
      <h2 id="audit-title">Audit trail</h2>
      <form id="audit-filter" role="search">
        <input id="audit-user" name="user" type="search" placeholder="User email or id" aria-label="Filter by user" maxlength="254" autocomplete="off" />
        <select id="audit-type" name="type" aria-label="Filter by event type"><option value="">all events</option>${AUDIT_TYPES.map(
          (t) => `<option value="${t}">${t}</option>`,
        ).join("")}</select>
        <select id="audit-since" name="since" aria-label="Time">
          <option value="3600">last hour</option><option value="86400" selected>last 24 hours</option>
          <option value="604800">last 7 days</option><option value="2592000">last 30 days</option><option value="">all</option>
        </select>
      </form>
      <p class="status" id="audit-status" aria-live="polite"></p>
      <ul class="list" id="audit"></ul>
    </section>
    <section id="jobs-panel" data-tab="jobs" aria-labelledby="jobs-title">
      <h2 id="jobs-title">Scheduled jobs</h2>
      <form id="jobs-filter" role="search">
        <select id="jobs-state" name="state" aria-label="Filter by state">
          <option value="">all states</option><option value="pending">pending</option><option value="running">running</option>
          <option value="done">done</option><option value="failed">failed</option><option value="canceled">canceled</option>
        </select>
      </form>
      <p class="status" id="jobs-status" aria-live="polite"></p>
      <ul class="list" id="jobs"></ul>
    </section>
    <section id="env-panel" data-tab="env" aria-labelledby="env-title">
      <h2 id="env-title">Environment variables</h2>
      <p class="meta">Names only; values stay on the server.</p>
      <ul class="list" id="env"></ul>
      <p class="status" id="env-status" aria-live="polite"></p>
      <div class="row"><button id="env-refresh" type="button">Refresh</button></div>
    </section>
  </main>`,
  "sign-in": `
  <header><h1>Admin console</h1><a href="/">App</a></header>
  <main class="narrow">
    <section>
      <h2>Sign in</h2>
      <p class="meta">The admin console is for administrators. Sign in with an administrator's account.</p>
      <form id="sign-in">
        <input name="email" type="email" placeholder="Email" aria-label="Email" required autocomplete="username" />
        <input name="password" type="password" placeholder="Password" aria-label="Password" required autocomplete="current-password" />
        <button type="submit" class="primary">Sign in</button>
      </form>
      <p class="status error" id="sign-in-status" role="alert"></p>
    </section>
  </main>`,
  forbidden: `
  <header><h1>Admin console</h1><a href="/">App</a></header>
  <main class="narrow">
    <section>
      <h2>Administrators only</h2>
      <p>You are signed in, but your account is not an administrator's.</p>
      <div class="row">
        <button id="stop-impersonating" type="button" hidden>Stop impersonating</button>
        <button id="sign-out" type="button">Sign out</button>
      </div>
      <p class="status error" id="forbidden-status" role="alert"></p>
    </section>
  </main>`,
};

/** The whole HTML page of `view`. */
export function consolePage(view: ConsoleView): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1" />
  <title>Admin console · Service Auth</title>
  <link rel="icon" type="image/svg+xml" href="/favicon.svg" />
  <style>${STYLE}</style>
</head>
<body data-view="${view}">${BODY[view]}
  <script type="module" src="/admin/console.js"></script>
</body>
</html>`;
}
