/**
 * The readable form of a log line, for a person at a terminal: `12:04:05 warn  message  key=value`.
 * Machines get JSON lines instead (logger.ts picks, `LOG_FORMAT`).
 */

const URL_PATTERN = /\bhttps?:\/\/[^\s"'<>]+/g;
/** ANSI styles, used only when the terminal shows them. */
const STYLE = {
  dim: [2, 22],
  bold: [1, 22],
  yellow: [33, 39],
  red: [31, 39],
  cyan: [36, 39],
  underline: [4, 24],
};

function paint(text: string, styles: (keyof typeof STYLE)[], color: boolean): string {
  if (!color) return text;
  return styles.reduce((out, s) => `\x1b[${STYLE[s][0]}m${out}\x1b[${STYLE[s][1]}m`, text);
}

/** A field's value as `key=value` shows it: bare when it reads unambiguously, else as JSON. */
function fieldValue(value: unknown): string {
  if (typeof value === "string") return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  if (value === undefined) return "undefined";
  return JSON.stringify(value);
}

/**
 * One log line as text. `line` is what the JSON form would print (`t`, `level`, `msg` and the
 * already redacted fields). A `link` field gets a line of its own, so a development outbox's link
 * is easy to spot; with `color`, warnings and errors are coloured and links underlined.
 *
 * @example
 * ```ts
 * textLine({ t: "2026-01-02T12:04:05.000Z", level: "info", msg: "listening", url: "http://localhost:3000" }, false);
 * // "12:04:05 info  listening  url=http://localhost:3000"
 * ```
 */
export function textLine(
  line: { t: string; level: string; msg: string } & Record<string, unknown>,
  color: boolean,
): string {
  const { t, level, msg, ...fields } = line;
  const time = paint(t.slice(11, 19), ["dim"], color);
  const tag = level.padEnd(5);
  const shownLevel =
    level === "error"
      ? paint(tag, ["red", "bold"], color)
      : level === "warn"
        ? paint(tag, ["yellow"], color)
        : paint(tag, ["dim"], color);
  const links = (text: string) =>
    color ? text.replace(URL_PATTERN, (url) => paint(url, ["cyan", "underline"], true)) : text;
  const { link, ...rest } = fields;
  const pairs = Object.entries(rest).map(
    ([k, v]) => `${paint(`${k}=`, ["dim"], color)}${links(fieldValue(v))}`,
  );
  const head = [`${time} ${shownLevel} ${links(msg)}`, ...pairs].join("  ");
  // A link to follow (the development outbox's) gets a line of its own: easy to spot and to copy.
  return typeof link === "string" ? `${head}\n         → ${links(link)}` : head;
}
