/**
 * Structured logs to stderr (stdout is reserved for command output, e.g. `cli run`). Values that
 * look like secrets are redacted by key name, so a careless `logger.info(…, { token })` leaks nothing.
 */

const SECRET_KEYS = /token|secret|password|jwks|authorization|cookie|private/i;

export type LogFields = Record<string, unknown>;

function redact(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [k, v] of Object.entries(fields)) out[k] = SECRET_KEYS.test(k) ? "[redacted]" : v;
  return out;
}

function write(level: "info" | "warn" | "error", message: string, fields?: LogFields): void {
  if (process.env.LOG_LEVEL === "silent") return;
  if (level === "info" && process.env.LOG_LEVEL === "error") return;
  const line = { t: new Date().toISOString(), level, msg: message, ...(fields ? redact(fields) : {}) };
  process.stderr.write(`${JSON.stringify(line)}\n`);
}

export const logger = {
  info: (message: string, fields?: LogFields) => write("info", message, fields),
  warn: (message: string, fields?: LogFields) => write("warn", message, fields),
  error: (message: string, fields?: LogFields) => write("error", message, fields),
};
