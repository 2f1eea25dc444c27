/**
 * The example's browser app: Better Auth for sign-up/in/out, the backend client for live
 * queries over the WebSocket, with the JWT kept fresh through `GET /api/auth/backend/token`.
 * Every form reports its own errors and is disabled while its request is pending.
 */
import { createAuthClient } from "better-auth/client";
import { adminClient } from "better-auth/client/plugins";
import { BackendClient, type BackendError, backendClient } from "service-auth/client";
import { api } from "./api.ts";
import { isAuthError, signedOutReason } from "./signed-out-reason.ts";

const authClient = createAuthClient({ baseURL: location.origin, plugins: [backendClient(), adminClient()] });
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

function clearForms() {
  for (const id of ["sign-up", "sign-in", "send"]) ($(id) as HTMLFormElement).reset();
  for (const id of ["sign-up-error", "sign-in-error", "send-error", "error"]) say(id, "");
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
  for (const id of ["me-name", "me-username", "me-role"]) say(id, "");
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
      (me: { name: string; username: string | null; role: string | null }) => {
        say("me-name", me.name);
        say("me-username", me.username ?? "");
        say("me-role", me.role ? `, ${me.role}` : "");
        say("impersonated-name", me.name);
      },
      onQueryError,
    ),
    backend.subscribe(api.messages.list, {}, renderMessages, onQueryError),
  ];
  void showImpersonation();
}

/** An administrator viewing the app as this user sees a way back. */
async function showImpersonation() {
  const session = await authClient.getSession();
  const impersonatedBy = (session.data?.session as { impersonatedBy?: string | null } | undefined)
    ?.impersonatedBy;
  $("impersonating").hidden = !impersonatedBy;
}

/** Wires the backend client to the session: a token while signed in, signed-out on 401. */
function startAuth() {
  backend.setAuth(
    async () => authClient.backend.getToken(),
    (isAuthenticated) => (isAuthenticated ? signedIn() : signedOut()),
  );
}

/** The public user count; resubscribed on every sign-out, which stops all live queries. */
function watchUserCount(): () => void {
  return backend.subscribe(api.users.count, {}, (n: number) => say("user-count", String(n)));
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
  if (
    await pending(button, "sign-in-error", "Sign-in failed", () =>
      authClient.signIn.email({ email, password }),
    )
  )
    startAuth();
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
