/**
 * The example's browser app: Better Auth for sign-up/in/out, organizations and two-factor
 * (TOTP), the backend client for live queries over the WebSocket, with the JWT kept fresh through
 * `GET /api/auth/backend/token`. Every form reports its own errors and is disabled while its
 * request is pending.
 */
import { createAuthClient } from "better-auth/client";
import { adminClient, organizationClient, twoFactorClient } from "better-auth/client/plugins";
import { BackendClient, type BackendError, backendClient } from "service-auth/client";
import { api } from "./api.ts";
import { isAuthError, signedOutReason } from "./signed-out-reason.ts";

const authClient = createAuthClient({
  baseURL: location.origin,
  plugins: [backendClient(), adminClient(), organizationClient(), twoFactorClient()],
});
const backend = new BackendClient(`${location.origin.replace(/^http/, "ws")}/api/sync`, {
  onConnectionChange: (state) => {
    $("connection").textContent = state;
  },
});

const $ = (id: string) => document.getElementById(id) as HTMLElement;
const say = (id: string, message: string) => {
  $(id).textContent = message;
};

let stopSignedIn: (() => void)[] = [];
/** The last session-ending error the server sent: why the page is about to be signed out. */
let authError: BackendError | undefined;
/** True while the user's own Sign out click is in progress: no "you were signed out" then. */
let signingOut = false;

function renderMessages(messages: { _id: string; author: string; body: string }[]) {
  const list = $("messages");
  list.replaceChildren(
    ...messages.map((m) => {
      const li = document.createElement("li");
      const who = document.createElement("b");
      who.textContent = m.author;
      li.append(who, document.createTextNode(m.body));
      return li;
    }),
  );
}

const FORMS = [
  "sign-up",
  "sign-in",
  "two-factor-sign-in",
  "send",
  "create-org",
  "switch-org",
  "enable-two-factor",
  "confirm-two-factor",
];
const ERRORS = [
  "sign-up-error",
  "sign-in-error",
  "two-factor-sign-in-error",
  "send-error",
  "create-org-error",
  "switch-org-error",
  "two-factor-error",
  "error",
];

function clearForms() {
  for (const id of FORMS) ($(id) as HTMLFormElement).reset();
  for (const id of ERRORS) say(id, "");
  $("two-factor").hidden = true;
  $("totp-setup").hidden = true;
  for (const id of ["totp-secret", "totp-uri"]) say(id, "");
}

/** The user's organizations (for the switcher) and the session's active one (live, `users:session`). */
let organizations: { id: string; name: string }[] = [];
let activeOrganizationId: string | null = null;

function renderOrganizations() {
  const select = $("org-select") as HTMLSelectElement;
  select.replaceChildren(
    ...organizations.map((o) => {
      const option = document.createElement("option");
      option.value = o.id;
      option.textContent = o.name;
      return option;
    }),
  );
  if (activeOrganizationId) select.value = activeOrganizationId;
  ($("switch-org") as HTMLFormElement).hidden = organizations.length === 0;
  const active = organizations.find((o) => o.id === activeOrganizationId);
  say("active-org", active?.name ?? (activeOrganizationId ? "…" : "none"));
}

async function loadOrganizations() {
  const { data } = await authClient.organization.list();
  organizations = (data ?? []).map((o) => ({ id: o.id, name: o.name }));
  renderOrganizations();
}

function onQueryError(error: BackendError) {
  if (isAuthError(error)) authError = error;
  else say("error", error.message);
}

function signedOut() {
  const wasSignedIn = stopSignedIn.length > 0;
  for (const stop of stopSignedIn) stop();
  stopSignedIn = [];
  // The client stops every live query when it reports signed-out, public ones included.
  stopUserCount();
  stopUserCount = watchUserCount();
  // Nothing of the signed-in user's stays in the page.
  renderMessages([]);
  for (const id of ["me-name", "me-username", "me-role", "two-factor-status"]) say(id, "");
  organizations = [];
  activeOrganizationId = null;
  renderOrganizations();
  clearForms();
  $("impersonating").hidden = true;
  if (wasSignedIn && !signingOut) say("notice", signedOutReason(authError));
  authError = undefined;
  $("signed-in").hidden = true;
  $("signed-out").hidden = false;
}

function signedIn() {
  if (stopSignedIn.length) return;
  clearForms();
  say("notice", "");
  $("signed-out").hidden = true;
  $("signed-in").hidden = false;
  stopSignedIn = [
    backend.subscribe(
      api.users.me,
      {},
      (me) => {
        say("me-name", me.name);
        say("me-username", me.username ?? "");
        say("me-role", me.role ? `, ${me.role}` : "");
        say("impersonated-name", me.name);
        say("two-factor-status", me.twoFactorEnabled ? "on" : "off");
        ($("enable-two-factor") as HTMLFormElement).hidden = me.twoFactorEnabled;
      },
      onQueryError,
    ),
    backend.subscribe(api.messages.list, {}, renderMessages, onQueryError),
    // The session document itself: switching organizations changes it, and the page follows.
    backend.subscribe(
      api.users.session,
      {},
      (session) => {
        activeOrganizationId = session.activeOrganizationId;
        renderOrganizations();
      },
      onQueryError,
    ),
  ];
  void showImpersonation();
  void loadOrganizations();
}

/** An administrator viewing the app as this user sees a way back. */
async function showImpersonation() {
  const session = await authClient.getSession();
  const impersonatedBy = (session.data?.session as { impersonatedBy?: string | null } | undefined)
    ?.impersonatedBy;
  $("impersonating").hidden = !impersonatedBy;
}

/**
 * A request that replaces the session (confirming two-factor deletes the old one and sets a new
 * cookie). The old session's end reaches the live connection before the response reaches the
 * page: token fetches wait for the response, so they ask with the new cookie, not the dead one.
 */
let replacingSession: Promise<unknown> = Promise.resolve();

/** Wires the backend client to the session: a token while signed in, signed-out on 401. */
function startAuth() {
  backend.setAuth(
    async () => {
      await replacingSession.catch(() => undefined);
      return authClient.backend.getToken();
    },
    (isAuthenticated) => (isAuthenticated ? signedIn() : signedOut()),
  );
}

/** The public user count; resubscribed on every sign-out, which stops all live queries. */
function watchUserCount(): () => void {
  return backend.subscribe(api.users.count, {}, (n: number) => {
    say("user-count", String(n));
    say("user-count-label", n === 1 ? "user signed up" : "users signed up");
  });
}
let stopUserCount = watchUserCount();

function formValues(form: HTMLFormElement): Record<string, string> {
  return Object.fromEntries(new FormData(form).entries()) as Record<string, string>;
}

/** Runs `task` with `button` disabled; a thrown error or Better Auth's `{ error }` shows in `errorId`. */
async function pending(
  button: HTMLButtonElement,
  errorId: string,
  fallback: string,
  task: () => Promise<unknown>,
) {
  button.disabled = true;
  say(errorId, "");
  try {
    const result = (await task()) as { error?: { message?: string } | null } | undefined;
    if (result?.error) {
      say(errorId, result.error.message || fallback);
      return false;
    }
    return true;
  } catch (error) {
    say(errorId, (error as Error).message || fallback);
    return false;
  } finally {
    button.disabled = false;
  }
}

function onSubmit(id: string, handler: (form: HTMLFormElement, button: HTMLButtonElement) => Promise<void>) {
  $(id).addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const button = form.querySelector("button") as HTMLButtonElement;
    // A second Enter while the first submit is pending does nothing.
    if (!button.disabled) void handler(form, button);
  });
}

onSubmit("sign-up", async (form, button) => {
  const { name, email, password } = formValues(form);
  if (
    await pending(button, "sign-up-error", "Sign-up failed", () =>
      authClient.signUp.email({ name, email, password }),
    )
  )
    startAuth();
});

onSubmit("sign-in", async (form, button) => {
  const { email, password } = formValues(form);
  let needsCode = false;
  const ok = await pending(button, "sign-in-error", "Sign-in failed", async () => {
    const result = await authClient.signIn.email({ email, password });
    // Two-factor users get no session yet: a code from their app completes the sign-in.
    needsCode = Boolean((result.data as { twoFactorRedirect?: boolean } | null)?.twoFactorRedirect);
    return result;
  });
  if (!ok) return;
  if (!needsCode) return startAuth();
  $("two-factor").hidden = false;
  ($("two-factor-sign-in").querySelector("input") as HTMLInputElement).focus();
});

onSubmit("two-factor-sign-in", async (form, button) => {
  const { code } = formValues(form);
  if (
    await pending(button, "two-factor-sign-in-error", "Wrong code", () =>
      authClient.twoFactor.verifyTotp({ code }),
    )
  )
    startAuth();
});

/** A URL-safe slug for an organization name, made unique with a random suffix. */
function slugOf(name: string): string {
  const base = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");
  return `${base || "org"}-${crypto.randomUUID().slice(0, 6)}`;
}

onSubmit("create-org", async (form, button) => {
  const { name } = formValues(form);
  // Better Auth makes a new organization the active one.
  if (
    await pending(button, "create-org-error", "Could not create the organization", () =>
      authClient.organization.create({ name, slug: slugOf(name) }),
    )
  ) {
    form.reset();
    await loadOrganizations();
  }
});

onSubmit("switch-org", async (form, button) => {
  const { organizationId } = formValues(form);
  await pending(button, "switch-org-error", "Could not switch", () =>
    authClient.organization.setActive({ organizationId }),
  );
});

onSubmit("enable-two-factor", async (form, button) => {
  const { password } = formValues(form);
  await pending(button, "two-factor-error", "Could not enable two-factor", async () => {
    const result = await authClient.twoFactor.enable({ password });
    // Better Auth 1.7 answers `{ method: "otp" }` when the second factor is an emailed code.
    if (result.data && "totpURI" in result.data) {
      const uri = result.data.totpURI;
      say("totp-uri", uri);
      say("totp-secret", new URL(uri).searchParams.get("secret") ?? "");
      $("totp-setup").hidden = false;
      form.reset();
    }
    return result;
  });
});

onSubmit("confirm-two-factor", async (form, button) => {
  const { code } = formValues(form);
  const verifying = authClient.twoFactor.verifyTotp({ code });
  replacingSession = verifying;
  if (await pending(button, "two-factor-error", "Wrong code", () => verifying)) {
    $("totp-setup").hidden = true;
    form.reset();
  }
});

$("sign-out").addEventListener("click", async (event) => {
  const button = event.currentTarget as HTMLButtonElement;
  signingOut = true;
  try {
    await pending(button, "error", "Sign-out failed", () => authClient.signOut());
    backend.clearAuth();
    signedOut();
  } finally {
    signingOut = false;
  }
});

$("stop-impersonating").addEventListener("click", async (event) => {
  const button = event.currentTarget as HTMLButtonElement;
  if (
    await pending(button, "error", "Could not stop impersonating", () => authClient.admin.stopImpersonating())
  )
    location.assign("/admin");
});

onSubmit("send", async (form, button) => {
  const { body } = formValues(form);
  if (
    await pending(button, "send-error", "Sending failed", () => backend.mutation(api.messages.send, { body }))
  )
    form.reset();
});

startAuth();
