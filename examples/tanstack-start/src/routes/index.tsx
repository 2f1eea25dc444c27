/**
 * The page: signed in, the user's name and the messages (preloaded by the loader, then live);
 * signed out, the sign-in form. `router.invalidate()` (after sign-in or sign-out) runs the loader again.
 */
import { createFileRoute } from "@tanstack/react-router";
import { Chat } from "../lib/chat.tsx";
import { getHome } from "../lib/page-data.ts";
import { SignIn } from "../lib/sign-in.tsx";

export const Route = createFileRoute("/")({
  loader: () => getHome(),
  component: Home,
});

function Home() {
  const home = Route.useLoaderData();
  if (!home) return <SignIn />;
  // Keyed by the data: a new load (another user) starts a new subscription.
  return <Chat key={home.messages.path} name={home.name} messages={home.messages} />;
}
