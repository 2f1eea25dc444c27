/**
 * A real SMTP server for the mail tests (`smtp-server` on 127.0.0.1, a free port): it accepts
 * every message, optionally only after AUTH with a user and password, and keeps them decoded so a
 * test can read the link or code the way a mail client would. With `refuse` it answers every
 * message 550 after receiving it, as a server that does not accept a message does. With `stall` it
 * holds each new connection before its greeting until `release()`, as a slow server does; `port`
 * starts it on a given port (a server that comes back where it was down).
 */
import { SMTPServer } from "smtp-server";

/** A received message: envelope, headers and the decoded text body. */
export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  headerFrom: string;
  text: string;
  /** The SMTP user that authenticated, if any. */
  user?: string;
}

export interface TestSmtpServer {
  port: number;
  /** `smtp://[user:pass@]127.0.0.1:port` */
  url: string;
  messages: ReceivedMail[];
  /** Waits until a message to `to` arrives after the first `skip` ones to that address. */
  next(to: string, skip?: number): Promise<ReceivedMail>;
  /** How many messages went to `to` so far. */
  count(to: string): number;
  /** Connections held before their greeting now (with `stall`). */
  readonly stalled: number;
  /** Greets the held connections and every later one (with `stall`). */
  release(): void;
  close(): Promise<void>;
}

/** Quoted-printable (RFC 2045): soft line breaks removed, `=XX` bytes decoded as UTF-8. */
function decodeQuotedPrintable(body: string): string {
  const joined = body.replace(/=\r?\n/g, "");
  const bytes: number[] = [];
  for (let i = 0; i < joined.length; i++) {
    if (joined[i] === "=" && /^[0-9A-F]{2}$/i.test(joined.slice(i + 1, i + 3))) {
      bytes.push(Number.parseInt(joined.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(...Buffer.from(joined[i]));
  }
  return Buffer.from(bytes).toString("utf8");
}

/** A single-part text message as nodemailer writes it. */
function parse(raw: string): { headers: Map<string, string>; text: string } {
  const split = raw.indexOf("\r\n\r\n");
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, " ");
  const headers = new Map<string, string>();
  for (const line of head.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  const body = raw.slice(split + 4);
  const encoding = (headers.get("content-transfer-encoding") ?? "7bit").toLowerCase();
  const text =
    encoding === "quoted-printable"
      ? decodeQuotedPrintable(body)
      : encoding === "base64"
        ? Buffer.from(body, "base64").toString("utf8")
        : body;
  return { headers, text: text.replace(/\r\n/g, "\n") };
}

export async function startSmtpServer(
  options: {
    user?: string;
    pass?: string;
    timeoutMs?: number;
    refuse?: boolean;
    stall?: boolean;
    port?: number;
  } = {},
): Promise<TestSmtpServer> {
  const messages: ReceivedMail[] = [];
  const waiters = new Set<() => void>();
  let held: (() => void)[] | undefined = options.stall ? [] : undefined;
  const server = new SMTPServer({
    onConnect(_session, callback) {
      if (held) held.push(() => callback());
      else callback();
    },
    authOptional: options.user === undefined,
    allowInsecureAuth: true,
    disabledCommands: options.user === undefined ? ["STARTTLS", "AUTH"] : ["STARTTLS"],
    logger: false,
    size: 1024 * 1024,
    onAuth(auth, _session, callback) {
      if (auth.username === options.user && auth.password === options.pass)
        callback(null, { user: auth.username });
      else callback(new Error("Invalid username or password"));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        if (options.refuse) {
          callback(Object.assign(new Error("Message rejected by policy"), { responseCode: 550 }));
          return;
        }
        const { headers, text } = parse(Buffer.concat(chunks).toString("utf8"));
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          subject: headers.get("subject") ?? "",
          headerFrom: headers.get("from") ?? "",
          text,
          user: typeof session.user === "string" ? session.user : undefined,
        });
        for (const wake of waiters) wake();
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const port = (server.server.address() as { port: number }).port;
  const credentials =
    options.user === undefined
      ? ""
      : `${encodeURIComponent(options.user)}:${encodeURIComponent(options.pass ?? "")}@`;
  const release = () => {
    const waiting = held ?? [];
    held = undefined;
    for (const greet of waiting) greet();
  };
  const to = (address: string) => messages.filter((m) => m.to.includes(address));
  return {
    port,
    url: `smtp://${credentials}127.0.0.1:${port}`,
    messages,
    count: (address) => to(address).length,
    get stalled() {
      return held?.length ?? 0;
    },
    release,
    next(address, skip = 0) {
      const found = () => to(address)[skip];
      const hit = found();
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(new Error(`no mail to ${address} (got ${messages.length} in all)`));
        }, options.timeoutMs ?? 10_000);
        const wake = () => {
          const m = found();
          if (!m) return;
          clearTimeout(timer);
          waiters.delete(wake);
          resolve(m);
        };
        waiters.add(wake);
      });
    },
    close() {
      release();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
