/**
 * The real client address of a request, and the key rate limits count it under. The socket's peer
 * is the client unless it is a proxy listed in `TRUSTED_PROXIES` (CIDRs or addresses, comma
 * separated; default none): then `X-Forwarded-For` is read from the right, and the first hop that
 * is not a trusted proxy is the client. Hops left of it are whatever the client claimed and are
 * never believed, so a forged header cannot choose the address.
 */
import { BlockList, isIP, isIPv4, isIPv6 } from "node:net";
import type { EnvReader } from "./functions/define.ts";
import { logger } from "./logger.ts";

/** The setting naming the proxies whose `X-Forwarded-For` is believed. */
export const TRUSTED_PROXIES_VAR = "TRUSTED_PROXIES";

/** The proxies of one `TRUSTED_PROXIES` value. */
export interface TrustedProxies {
  /** Whether `address` (as normalised by {@link normalizeAddress}) is a trusted proxy. */
  has(address: string): boolean;
}

const NONE: TrustedProxies = { has: () => false };

/**
 * Parses a `TRUSTED_PROXIES` value: `10.0.0.0/8, 192.168.1.7, fd00::/8`. Throws naming the first
 * entry that is neither an address nor a CIDR, so a typo does not silently trust nothing (or all).
 */
export function parseTrustedProxies(value: string | undefined): TrustedProxies {
  if (!value?.trim()) return NONE;
  const list = new BlockList();
  for (const raw of value.split(",")) {
    const entry = raw.trim();
    if (!entry) continue;
    const slash = entry.indexOf("/");
    const address = slash < 0 ? entry : entry.slice(0, slash);
    const family = isIPv4(address) ? "ipv4" : isIPv6(address) ? "ipv6" : undefined;
    const prefix = slash < 0 ? undefined : Number(entry.slice(slash + 1));
    const maxPrefix = family === "ipv4" ? 32 : 128;
    if (
      !family ||
      (prefix !== undefined && !(Number.isInteger(prefix) && prefix >= 0 && prefix <= maxPrefix))
    ) {
      throw new Error(`${TRUSTED_PROXIES_VAR}: "${entry}" is not an IP address or CIDR`);
    }
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, prefix, family);
  }
  return { has: (address) => list.check(address, isIPv4(address) ? "ipv4" : "ipv6") };
}

let cached: { value: string | undefined; proxies: TrustedProxies } | undefined;

/**
 * The trusted proxies the env names now (parsed once per distinct value). An invalid value trusts
 * no proxy (every client is its socket's peer) and is logged once.
 */
export function trustedProxiesOf(env: EnvReader): TrustedProxies {
  const value = env.get(TRUSTED_PROXIES_VAR);
  if (cached === undefined || cached.value !== value) {
    let proxies = NONE;
    try {
      proxies = parseTrustedProxies(value);
    } catch (error) {
      logger.error("invalid setting; no proxy is trusted", { error: (error as Error).message });
    }
    cached = { value, proxies };
    return proxies;
  }
  return cached.proxies;
}

/**
 * An address as one client is known by: an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`, how a
 * dual-stack socket shows an IPv4 peer) as its IPv4 address, brackets and a zone dropped.
 */
export function normalizeAddress(address: string): string {
  let a = address.trim();
  if (a.startsWith("[") && a.endsWith("]")) a = a.slice(1, -1);
  // Checks before the expressions: this runs for every request, and most addresses have neither.
  if (a.includes("%")) a = a.replace(/%.*$/, "");
  if (a.charCodeAt(0) !== 58 /* ":" */) return a;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
  return mapped && isIPv4(mapped[1]) ? mapped[1] : a;
}

/**
 * The client's address: the socket's peer, or, when that peer is a trusted proxy, the right-most
 * `X-Forwarded-For` hop that is not. A hop that is not an IP address ends the walk at the last
 * address known good (that proxy): garbage is never used as a client's address.
 */
export function clientAddress(
  socketAddress: string | undefined,
  forwardedFor: string | null | undefined,
  proxies: TrustedProxies,
): string | undefined {
  if (socketAddress === undefined) return undefined;
  let client = normalizeAddress(socketAddress);
  if (!forwardedFor || !proxies.has(client)) return client;
  const hops = forwardedFor.split(",");
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normalizeAddress(hops[i]);
    if (isIP(hop) === 0) return client;
    client = hop;
    if (!proxies.has(hop)) return hop;
  }
  return client;
}

/**
 * {@link clientAddress} with the trusted proxies of `env`, read only when the request names a
 * forwarded address (without one the socket's peer is the client whoever the proxies are, and
 * reading the process environment costs about a microsecond per request).
 */
export function requestClientAddress(
  env: EnvReader,
  socketAddress: string | undefined,
  forwardedFor: string | null | undefined,
): string | undefined {
  return clientAddress(socketAddress, forwardedFor, forwardedFor ? trustedProxiesOf(env) : NONE);
}

/**
 * The key IP-based rate limits count a client under (GHSA-p6v2-xcpg-h6xw): an IPv4 address as is;
 * an IPv6 address as its /64 network (`2001:db8:1:2::/64`), since one IPv6 client holds a whole
 * /64 and would otherwise rotate addresses past any limit. Anything else is returned unchanged.
 *
 * @example
 * ```ts
 * import { rateLimitKey } from "service-auth/server";
 *
 * rateLimitKey("203.0.113.7"); // "203.0.113.7"
 * rateLimitKey("2001:db8:1:2:3:4:5:6"); // "2001:db8:1:2::/64"
 * ```
 */
export function rateLimitKey(ip: string): string {
  const address = normalizeAddress(ip);
  if (isIPv4(address) || !isIPv6(address)) return address;
  const groups = ipv6Groups(address.toLowerCase());
  // IPv4-mapped in hex notation (::ffff:cb00:7107): the IPv4 client, not the shared ::/64.
  if (groups.slice(0, 5).every((g) => g === "0") && groups[5] === "ffff") {
    const [hi, lo] = [Number.parseInt(groups[6], 16), Number.parseInt(groups[7], 16)];
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return `${groups.slice(0, 4).join(":")}::/64`;
}

/** The eight groups of a valid IPv6 address, in hex without leading zeros. */
function ipv6Groups(address: string): string[] {
  let text = address;
  const v4 = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(2).map(Number);
    text = `${v4[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split("::");
  const part = (s: string | undefined) => (s ? s.split(":") : []);
  const left = part(head);
  const right = part(tail);
  const groups =
    tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  return groups.map((g) => Number.parseInt(g, 16).toString(16));
}
