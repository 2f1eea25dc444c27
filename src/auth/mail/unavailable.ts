/**
 * The 503 `MAIL_UNAVAILABLE` of a message that could not be sent, and which of them the request
 * must answer with. Better Auth 1.4.9 sends most of its emails through `runInBackgroundOrAwait`,
 * which logs a failed send and lets the request succeed (a sign-up answered 200 with the user kept
 * and no verification email sent). The `backend` plugin rethrows the failures marked here, so
 * they end the request, inside its transaction where there is one (sign-up: nothing is kept).
 * Where Better Auth sends after its transaction and only logs a failure (1.7's sign-up), the auth
 * middleware learns of it through {@link watchingMailFailures} and undoes the sign-up itself.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { APIError } from "better-auth/api";

/** Failures the request answers with; the rest stay logged only. */
const answered = new WeakSet<object>();
/** Per auth request: whether a failure it must answer with happened, wherever it was caught. */
const requestFailures = new AsyncLocalStorage<{ failed: boolean }>();

/** Runs one auth request; `mailFailed`: a failure it must answer with happened meanwhile. */
export async function watchingMailFailures<T>(
  run: () => Promise<T>,
): Promise<{ value: T; mailFailed: boolean }> {
  const state = { failed: false };
  const value = await requestFailures.run(state, run);
  return { value, mailFailed: state.failed };
}

/**
 * The error of an email that could not be sent. `answer`: whether the request answers with it even
 * where Better Auth would only log it; false where a 503 would tell whether the address has an
 * account (password reset: an unknown address sends nothing and answers 200).
 */
export function mailUnavailable(answer: boolean): APIError {
  const error = new APIError("SERVICE_UNAVAILABLE", {
    message: "The email could not be sent; try again later",
    code: "MAIL_UNAVAILABLE",
  });
  if (answer) {
    answered.add(error);
    const request = requestFailures.getStore();
    if (request) request.failed = true;
  }
  return error;
}

/** True for a {@link mailUnavailable} failure the request must answer with. */
export function isAnsweredMailFailure(error: unknown): boolean {
  return typeof error === "object" && error !== null && answered.has(error);
}
