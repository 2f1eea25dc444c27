/** Turns any thrown value into a wire error; internal errors are logged and never shown. */

import type { WireError } from "../../protocol/messages.ts";
import { clientErrorOf } from "../errors.ts";

/** `{code, message, data?}` exactly as the HTTP transport would report it. */
export function wireError(error: unknown): WireError {
  return clientErrorOf(error).error;
}
