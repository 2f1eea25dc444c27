/**
 * The example's browser app: Better Auth for sign-up/in/out, the backend client for live
 * queries over the WebSocket, with the JWT kept fresh through `GET /api/auth/backend/token`.
 */
import { createAuthClient } from "better-auth/client";
import { adminClient } from "better-auth/client/plugins";
import { BackendClient, backendClient } from "service-auth/client";
import { api } from "./api.ts";

const authClient = createAuthClient({ baseURL: location.origin, plugins: [backendClient(), adminClient()] });
const backend = new BackendClient(`${location.origin.replace(/^http/, "ws")}/api/sync`, {
  onConnectionChange: (state) => {
    $("connection").textContent = state;
  },
});

const $ = (id: string) => document.getElementById(id) as HTMLElement;
const showError = (message: string) => {
  $("error").textContent = message;
};

let stopSignedIn: (() => void)[] = [];

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

function signedOut() {
  for (const stop of stopSignedIn) stop();
  stopSignedIn = [];
  // The client stops every live query when it reports signed-out, public ones included.
  stopUserCount();
  stopUserCount = watchUserCount();
  // Nothing of the signed-in user's stays in the page.
  renderMessages([]);
  for (const id of ["me-name", "me-username", "me-role"]) $(id).textContent = "";
  $("signed-in").hidden = true;
  $("signed-out").hidden = false;
}

function signedIn() {
  if (stopSignedIn.length) return;
  $("signed-out").hidden = true;
  $("signed-in").hidden = false;
  stopSignedIn = [
    backend.subscribe(
      api.users.me,
      {},
      (me: { name: string; username: string | null; role: string | null }) => {
        $("me-name").textContent = me.name;
        $("me-username").textContent = me.username ?? "";
        $("me-role").textContent = me.role ? `, ${me.role}` : "";
      },
    ),
    backend.subscribe(api.messages.list, {}, renderMessages, (e) => showError(e.message)),
  ];
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
  return backend.subscribe(api.users.count, {}, (n: number) => {
    $("user-count").textContent = String(n);
  });
}
let stopUserCount = watchUserCount();

function formValues(form: HTMLFormElement): Record<string, string> {
  return Object.fromEntries(new FormData(form).entries()) as Record<string, string>;
}

$("sign-up").addEventListener("submit", async (event) => {
  event.preventDefault();
  const { name, email, password } = formValues(event.target as HTMLFormElement);
  const res = await authClient.signUp.email({ name, email, password });
  if (res.error) return showError(res.error.message ?? "Sign-up failed");
  showError("");
  startAuth();
});

$("sign-in").addEventListener("submit", async (event) => {
  event.preventDefault();
  const { email, password } = formValues(event.target as HTMLFormElement);
  const res = await authClient.signIn.email({ email, password });
  if (res.error) return showError(res.error.message ?? "Sign-in failed");
  showError("");
  startAuth();
});

$("sign-out").addEventListener("click", async () => {
  await authClient.signOut();
  backend.clearAuth();
  signedOut();
});

$("send").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target as HTMLFormElement;
  const { body } = formValues(form);
  try {
    await backend.mutation(api.messages.send, { body });
    form.reset();
    showError("");
  } catch (e) {
    showError((e as Error).message);
  }
});

startAuth();
