/**
 * The Host header rule of @hono/node-server, which answers 400 to a request whose Host does not
 * make a URL with that very host. The fast path serves only requests the adapter would accept,
 * and leaves the others to it; test/backend/http-fast-path.test.ts pins this rule to the adapter.
 */

/**
 * A check of Host headers: true when the header is present and the adapter would accept it.
 * Hosts are few, so verdicts are cached (up to 256 of them).
 */
export function hostChecker(): (host: string | undefined) => boolean {
  const verdicts = new Map<string, boolean>();
  return (host) => {
    // No host: the adapter falls back to the listen hostname (or refuses); it decides.
    if (!host) return false;
    let ok = verdicts.get(host);
    if (ok === undefined) {
      ok = acceptsHost(host);
      if (verdicts.size < 256) verdicts.set(host, ok);
    }
    return ok;
  };
}

function acceptsHost(host: string): boolean {
  try {
    const { hostname } = new URL(`http://${host}/`);
    return hostname.length === host.length || hostname === host.replace(/:\d+$/, "");
  } catch {
    return false;
  }
}
