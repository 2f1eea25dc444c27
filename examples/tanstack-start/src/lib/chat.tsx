/**
 * The signed-in page: messages preloaded by the server, shown from the first render and then
 * live over the WebSocket; a form to send one; sign-out.
 */
import { useRouter } from "@tanstack/react-router";
import { type FormEvent, useEffect, useState } from "react";
import type { Preloaded } from "service-auth/client";
import { useAuth, useMutation, usePreloadedQuery } from "service-auth/react";
import { useAuthClient } from "service-auth/tanstack-start";
import { api } from "./api.ts";

type Messages = Preloaded<typeof api.messages.list>;

function MessageList({ messages }: { messages: Messages }) {
  const list = usePreloadedQuery(messages);
  const { isAuthenticated } = useAuth();
  return (
    // data-live: the backend accepted the token, so the list is (or is about to be) subscribed.
    <ul id="messages" data-live={isAuthenticated}>
      {list.map((m) => (
        <li key={m._id}>
          <b>{m.author}</b> {m.body}
        </li>
      ))}
    </ul>
  );
}

function SendForm() {
  const send = useMutation(api.messages.send);
  const [error, setError] = useState("");
  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    setError("");
    try {
      await send({ body: String(new FormData(form).get("body")) });
      form.reset();
    } catch (e) {
      setError((e as Error).message);
    }
  }
  return (
    <form id="send" onSubmit={submit}>
      <input name="body" placeholder="Write a message" autoComplete="off" required maxLength={2000} />
      <button type="submit">Send</button>
      <p id="send-error" role="alert">
        {error}
      </p>
    </form>
  );
}

export function Chat({ name, messages }: { name: string; messages: Messages }) {
  const authClient = useAuthClient();
  const router = useRouter();
  const { isLoading, isAuthenticated } = useAuth();
  // Signed out (here, in another tab, or revoked): the list is not rendered as anonymous, whose
  // query would fail; the server renders the page again, signed out.
  const signedOut = !isLoading && !isAuthenticated;
  useEffect(() => {
    if (signedOut) void router.invalidate();
  }, [signedOut, router]);
  if (signedOut) return <p id="signed-out">Signed out.</p>;

  return (
    <main>
      <header>
        <h1>
          Hello, <span id="user">{name}</span>
        </h1>
        <button id="sign-out" className="secondary" type="button" onClick={() => void authClient.signOut()}>
          Sign out
        </button>
      </header>
      <MessageList messages={messages} />
      <SendForm />
    </main>
  );
}
