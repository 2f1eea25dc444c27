/**
 * The request body limit of the function endpoints: the default size, the check of a declared
 * length, and the collector that counts bytes as they arrive. The Node fast path feeds it from
 * `data` events, the Hono route from the web request's stream.
 */

/** Largest accepted request body by default: 1 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/**
 * Whether the request declares a body over the limit, so it can be refused before anything is
 * read. A `Content-Length` only counts when no `Transfer-Encoding` overrides it.
 */
export function declaresTooLarge(
  contentLength: string | null | undefined,
  transferEncoding: string | null | undefined,
  maxBodyBytes: number,
): boolean {
  if (contentLength == null || transferEncoding != null) return false;
  return Number.parseInt(contentLength, 10) > maxBodyBytes;
}

/** Collects the chunks of one body up to the limit. */
export class BodyCollector {
  // Small bodies arrive in one chunk: it is kept as is, and chunks are only listed from a second.
  private first: Uint8Array | undefined;
  private more: Uint8Array[] | undefined;
  private size = 0;

  constructor(private readonly maxBodyBytes: number) {}

  /** Adds a chunk; false (and nothing kept) once the body exceeds the limit. */
  add(chunk: Uint8Array): boolean {
    this.size += chunk.length;
    if (this.size > this.maxBodyBytes) return false;
    if (this.first === undefined) this.first = chunk;
    else if (this.more === undefined) this.more = [this.first, chunk];
    else this.more.push(chunk);
    return true;
  }

  /** The whole body. */
  bytes(): Buffer {
    if (this.more) return Buffer.concat(this.more, this.size);
    const first = this.first;
    if (first === undefined) return EMPTY;
    return Buffer.isBuffer(first) ? first : Buffer.from(first.buffer, first.byteOffset, first.byteLength);
  }
}

const EMPTY = Buffer.alloc(0);

/** Whether a `Content-Type` says JSON (`application/json`, `application/*+json`, any parameters). */
export function isJsonContentType(contentType: string | null | undefined): boolean {
  if (!contentType) return false;
  const type = contentType.split(";", 1)[0].trim().toLowerCase();
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

/** Marks a body over the limit. */
export const TOO_LARGE = Symbol("body too large");

/**
 * A request whose body (if any) has been read within the limit and is held in memory, so whoever
 * reads it next cannot be made to read more: the request, {@link TOO_LARGE}, or undefined when
 * the upload failed.
 */
export async function withBodyLimit(
  request: Request,
  maxBodyBytes: number,
): Promise<Request | typeof TOO_LARGE | undefined> {
  if (request.body === null || request.method === "GET" || request.method === "HEAD") return request;
  const body = await readWebBody(request, maxBodyBytes);
  if (body === TOO_LARGE || body === undefined) return body;
  return new Request(request.url, {
    method: request.method,
    headers: request.headers,
    body: body as Uint8Array<ArrayBuffer>,
    signal: request.signal,
  });
}

/**
 * Reads a web request's body within the limit: its bytes, {@link TOO_LARGE}, or undefined when
 * the upload failed. Past the limit the stream is left unread rather than cancelled: cancelling
 * would destroy the connection before the 413 is written (the adapter drains the rest).
 */
export async function readWebBody(
  request: Request,
  maxBodyBytes: number,
): Promise<Buffer | typeof TOO_LARGE | undefined> {
  const headers = request.headers;
  if (declaresTooLarge(headers.get("content-length"), headers.get("transfer-encoding"), maxBodyBytes))
    return TOO_LARGE;
  const body = new BodyCollector(maxBodyBytes);
  if (request.body === null) return body.bytes();
  const reader = request.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return body.bytes();
      if (!body.add(value)) return TOO_LARGE;
    }
  } catch {
    return undefined;
  }
}
