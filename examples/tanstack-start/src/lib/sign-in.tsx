/**
 * Sign-in and sign-up through Better Auth on this origin (the `/api/auth` route handler). Once the
 * backend has accepted the new session's token, the server renders the page again, signed in.
 */
import { useRouter } from "@tanstack/react-router";
import { type FormEvent, useEffect, useState } from "react";
import { useAuth } from "service-auth/react";
import { useAuthClient } from "service-auth/tanstack-start";

export function SignIn() {
  const authClient = useAuthClient();
  const { isAuthenticated } = useAuth();
  const router = useRouter();
  const [error, setError] = useState("");
  const [pending, setPending] = useState(false);
  // The buttons wait for the page to hydrate: clicked before, the form would submit natively
  // (and with `GET`, the password would land in the URL).
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);

  // Waiting for the backend (not just the sign-in answer) keeps the new page's data from being
  // dropped as the previous identity's when the session arrives after it.
  useEffect(() => {
    if (isAuthenticated) void router.invalidate();
  }, [isAuthenticated, router]);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const email = String(form.get("email"));
    const password = String(form.get("password"));
    const signUp = (event.nativeEvent as SubmitEvent).submitter?.getAttribute("value") === "sign-up";
    setPending(true);
    setError("");
    const result = signUp
      ? await authClient.signUp.email({ email, password, name: email.split("@")[0] })
      : await authClient.signIn.email({ email, password });
    setPending(false);
    if (result.error) setError(result.error.message ?? "Sign-in failed");
  }

  return (
    <main>
      <h1>Sign in</h1>
      <p className="hint">New here? Enter your email and a password, then choose Sign up.</p>
      <form id="sign-in" method="post" onSubmit={submit}>
        <input name="email" type="email" placeholder="Email" required autoComplete="username" />
        <input
          name="password"
          type="password"
          placeholder="Password"
          required
          autoComplete="current-password"
        />
        <button type="submit" value="sign-in" disabled={pending || !hydrated}>
          Sign in
        </button>
        <button type="submit" value="sign-up" className="secondary" disabled={pending || !hydrated}>
          Sign up
        </button>
        <p id="sign-in-error" role="alert">
          {error}
        </p>
      </form>
    </main>
  );
}
