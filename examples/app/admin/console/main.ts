/**
 * The admin console's script. The server picked the view (`<body data-view>`): the console, the
 * sign-in form or "administrators only"; each view wires its own controls.
 */
import { authClient } from "./clients.ts";
import { startConsole } from "./console.ts";
import { $, messageOf, pending, status } from "./ui.ts";

function signInView(): void {
  const form = $<HTMLFormElement>("sign-in");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const button = form.querySelector("button") as HTMLButtonElement;
    const res = await pending(button, "sign-in-status", () =>
      authClient.signIn.email({ email: String(data.get("email")), password: String(data.get("password")) }),
    );
    if (res) location.reload();
  });
}

async function forbiddenView(): Promise<void> {
  const session = await authClient.getSession();
  const stop = $<HTMLButtonElement>("stop-impersonating");
  stop.hidden = !(session.data?.session as { impersonatedBy?: string } | undefined)?.impersonatedBy;
  stop.addEventListener("click", async () => {
    const res = await pending(stop, "forbidden-status", () => authClient.admin.stopImpersonating());
    if (res) location.reload();
  });
  const signOut = $<HTMLButtonElement>("sign-out");
  signOut.addEventListener("click", async () => {
    const res = await pending(signOut, "forbidden-status", () => authClient.signOut());
    if (res) location.reload();
  });
}

const view = document.body.dataset.view;
try {
  if (view === "sign-in") signInView();
  else if (view === "forbidden") await forbiddenView();
  else startConsole();
} catch (error) {
  status(view === "sign-in" ? "sign-in-status" : "forbidden-status", messageOf(error), "error");
}
