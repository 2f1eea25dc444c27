/**
 * The 503 `MAIL_UNAVAILABLE` of a message that could not be sent, and which of them the request
 * must answer with. Better Auth 1.4.9 sends most of its emails through `runInBackgroundOrAwait`,
 * which logs a failed send and lets the request succeed (a sign-up answered 200 with the user kept
 * and no verification email sent). The `backend` plugin rethrows the failures marked here, so
 * they end the request, inside its transaction where there is one (sign-up: nothing is kept).
 */
import { APIError } from "better-auth/api";

/** Failures the request answers with; the rest stay logged only. */
const answered = new WeakSet<object>();

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
  if (answer) answered.add(error);
  return error;
}

/** True for a {@link mailUnavailable} failure the request must answer with. */
export function isAnsweredMailFailure(error: unknown): boolean {
  return typeof error === "object" && error !== null && answered.has(error);
}
