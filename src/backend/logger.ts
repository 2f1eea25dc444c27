/**
 * Structured logs to stderr (stdout is reserved for command output, e.g. `cli run`). Values that
 * look like secrets are redacted by key name, so a careless `logger.info(…, { token })` leaks nothing.
 */

const SECRET_KEYS = /token|secret|password|jwks|authorization|cookie|private/i;

export type LogFields = Record<string, unknown>;

/** Redacts by key name, nested objects included (a token inside `{ request: { headers } }` too). */
function redact(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== "object" || depth > 4) return value;
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

function write(level: Level, message: string, fields?: LogFields): void {
  if (LEVELS[level] < threshold()) return;
  const line = {
    t: new Date().toISOString(),
    level,
    msg: message,
    ...(fields ? (redact(fields) as LogFields) : {}),
  };
  process.stderr.write(`${JSON.stringify(line)}\n`);
}

export const logger = {
  info: (message: string, fields?: LogFields) => write("info", message, fields),
  warn: (message: string, fields?: LogFields) => write("warn", message, fields),
  error: (message: string, fields?: LogFields) => write("error", message, fields),
};
