/**
 * The page, rendered on the server with the request's JWT: signed in, the user's name and the
 * messages (preloaded, then live in the browser); signed out, the sign-in form.
 */
import { BackendCallError } from "service-auth/nextjs";
import { api } from "../lib/api.ts";
import { auth } from "../lib/auth-server.ts";
import { Chat } from "./chat.tsx";
import { SignIn } from "./sign-in.tsx";

export default async function Home() {
  if (!(await auth.isAuthenticated())) return <SignIn />;
  try {
    const [me, messages] = await Promise.all([
      auth.fetchAuthQuery(api.users.me, {}),
      auth.preloadAuthQuery(api.messages.list, {}),
    ]);
    return <Chat name={me.username ?? me.name} messages={messages} />;
  } catch (error) {
    // A fresh JWT whose session was revoked meanwhile: signed out after all.
    if (error instanceof BackendCallError && error.code === "UNAUTHORIZED") return <SignIn />;
    throw error;
  }
}
