/** Small HTTP helpers for tests talking to real servers on 127.0.0.1. */

export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  body: T;
  text: string;
}

/** POSTs `body` (serialized with JSON.stringify unless it is already a string) and parses the reply. */
export async function postJson<T = any>(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse<T>> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return readJson<T>(response);
}

/** GETs `url` and parses the reply as JSON when possible. */
export async function getJson<T = any>(
  url: string,
  headers: Record<string, string> = {},
): Promise<JsonResponse<T>> {
  return readJson<T>(await fetch(url, { headers }));
}

async function readJson<T>(response: Response): Promise<JsonResponse<T>> {
  const text = await response.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, body, text };
}

/** Calls `POST /api/{kind}` with `{path, args}`. */
export function callFunction<T = any>(
  baseUrl: string,
  kind: "query" | "mutation" | "action",
  path: string,
  args: unknown = {},
  headers: Record<string, string> = {},
): Promise<JsonResponse<T>> {
  return postJson<T>(`${baseUrl}/api/${kind}`, { path, args }, headers);
}
