/**
 * Logs to stderr (stdout is reserved for command output, e.g. `cli run`): JSON lines for machines,
 * readable lines for a person at a terminal (`LOG_FORMAT`, see {@link logFormat}). Secrets and
 * personal data are redacted, so a careless `logger.info(…, { token })` leaks nothing: fields by
 * key name, and inside every string (message included) email addresses, JWTs and bearer
 * credentials, which also reach logs embedded in error messages and third-party log arguments.
 */
import { textLine } from "./log-text.ts";

const SECRET_KEYS = /token|secret|password|jwks|authorization|cookie|private|email/i;
/** An email address, also inside longer text; bounded repetitions keep it linear on any input. */
const EMAIL = /[\w.+%-]{1,64}@(?:[\w-]{1,63}\.)+[\w-]{2,63}/g;
/** A JWS / JWT: three base64url segments, the first a JSON header (`eyJ`). */
const JWT = /eyJ[\w-]*\.[\w-]*\.[\w-]*/g;
/** The credential after an HTTP auth scheme. */
const BEARER = /\b(Bearer|Basic)\s+[^\s"',;]+/gi;
const MAX_DEPTH = 4;
/** Longer strings are cut: a log line is for people, and scrubbing stays cheap. */
const MAX_STRING = 4096;

export type LogFields = Record<string, unknown>;

/** `text` (cut to a bounded length) with email addresses, JWTs and bearer credentials replaced. */
function scrub(text: string): string {
  if (text.length > MAX_STRING) text = `${text.slice(0, MAX_STRING)}…[cut]`;
  return text.replace(JWT, "[token]").replace(BEARER, "$1 [redacted]").replace(EMAIL, "[email]");
}

/**
 * Redacts by key name, nested objects included (a token inside `{ request: { headers } }` too),
 * and scrubs every string; anything nested deeper than it looks is dropped rather than printed raw.
 */
function redact(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return scrub(value);
  if (value === null || typeof value !== "object") return value;
  if (depth > MAX_DEPTH) return "[nested]";
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: LogFields = {};
  for (const [k, v] of Object.entries(value))
    out[k] = SECRET_KEYS.test(k) ? "[redacted]" : redact(v, depth + 1);
  return out;
}

const LEVELS = { info: 1, warn: 2, error: 3, silent: 4 } as const;
type Level = "info" | "warn" | "error";

/** `LOG_LEVEL`: info (default), warn, error or silent. */
function threshold(): number {
  return LEVELS[(process.env.LOG_LEVEL ?? "info").toLowerCase() as keyof typeof LEVELS] ?? LEVELS.info;
}

/**
 * `LOG_FORMAT`: `json` (one JSON object a line) or `text` (readable lines). Unset: JSON with
 * `NODE_ENV=production` or when stderr is not a terminal (a file, a pipe to a log collector),
 * text in a terminal during development.
 *
 * @example
 * ```ts
 * process.env.LOG_FORMAT = "json";
 * logFormat(); // "json"
 * ```
 */
export function logFormat(): "json" | "text" {
  const asked = process.env.LOG_FORMAT?.toLowerCase();
  if (asked === "json" || asked === "text") return asked;
  return process.env.NODE_ENV !== "production" && process.stderr.isTTY ? "text" : "json";
}

function write(level: Level, message: string, fields?: LogFields): void {
  if (LEVELS[level] < threshold()) return;
  const line = {
    t: new Date().toISOString(),
    level,
    msg: scrub(message),
    ...(fields ? (redact(fields) as LogFields) : {}),
  };
  const text =
    logFormat() === "text"
      ? textLine(line, Boolean(process.stderr.isTTY) && !process.env.NO_COLOR)
      : JSON.stringify(line);
  process.stderr.write(`${text}\n`);
}

/**
 * Log lines on stderr (JSON, or readable text in a development terminal: {@link logFormat}), with secrets and personal data (tokens, passwords,
 * email addresses, JWTs) redacted from messages and fields.
 *
 * @example
 * ```ts
 * import { logger } from "service-auth/server";
 *
 * logger.info("listening", { url: service.url });
 * logger.warn("mail is not configured: messages are logged");
 * logger.error("payment webhook failed", { orderId, token }); // `token` is redacted
 * ```
 */
export const logger = {
  info: (message: string, fields?: LogFields) => write("info", message, fields),
  warn: (message: string, fields?: LogFields) => write("warn", message, fields),
  error: (message: string, fields?: LogFields) => write("error", message, fields),
};
