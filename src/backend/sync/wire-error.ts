/** Turns any thrown value into a wire error; internal errors are logged and never shown. */
import { randomUUID } from "node:crypto";
import { errorResponse } from "../http/app.ts";
import type { WireError } from "./protocol.ts";

/** `{code, message, data?}` exactly as the HTTP transport would report it. */
export function wireError(error: unknown): WireError {
  const { body } = errorResponse(error, randomUUID());
  const out: WireError = { code: String(body.code), message: String(body.message) };
  if (body.data !== undefined) out.data = body.data;
  return out;
}
