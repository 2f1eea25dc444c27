/**
 * A test "browser" for real servers: a cookie jar that behaves like a browser's, the site's Origin
 * on every request, JSON bodies; plus a free-port helper (SITE_URL must be known before listening).
 */
import { createServer } from "node:net";
import type { JsonResponse } from "./http.ts";

/** A free TCP port on 127.0.0.1 (SITE_URL must be known before the server listens). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Cookies as a browser keeps them: set by `Set-Cookie`, removed by `Max-Age=0`. */
export class CookieJar {
  readonly cookies = new Map<string, string>();
  /** Raw `Set-Cookie` lines of the last response, for attribute checks. */
  lastSetCookies: string[] = [];

  absorb(response: Response | Headers): void {
    const headers = response instanceof Headers ? response : response.headers;
    this.lastSetCookies = headers.getSetCookie();
    for (const line of this.lastSetCookies) {
      const [pair, ...attributes] = line.split(";").map((s) => s.trim());
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const expired = attributes.some((a) => /^max-age=0$/i.test(a)) || value === "";
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  get(name: string): string | undefined {
    return this.cookies.get(name);
  }
}

export interface FixtureBrowser {
  jar: CookieJar;
  /** Raw `Set-Cookie` lines of the last response. */
  send(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<JsonResponse>;
}

/** A browser at `url`: keeps cookies, sends the site's Origin, JSON bodies. */
export function browserAt(url: string): FixtureBrowser {
  const jar = new CookieJar();
  return {
    jar,
    async send(method, path, body, headers = {}) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: {
          origin: url,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(jar.cookies.size ? { cookie: jar.header() } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      jar.absorb(response);
      const text = await response.text();
      let parsed: any;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      return { status: response.status, headers: response.headers, body: parsed, text };
    },
  };
}
