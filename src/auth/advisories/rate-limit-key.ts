/**
 * The client key of IP-based rate limiting (GHSA-p6v2-xcpg-h6xw): one IPv6 client controls a
 * whole /64, so keying each IPv6 address separately lets it rotate addresses past any limit.
 * Not wired yet: the platform's rate limiting (another task) must key by this function.
 */
import { isIPv4, isIPv6 } from "node:net";

/** Eight 16-bit groups of an IPv6 address (with an embedded IPv4 tail converted), or undefined. */
function ipv6Groups(address: string): number[] | undefined {
  let text = address;
  const tail = text.match(/^(.*:)(\d+\.\d+\.\d+\.\d+)$/);
  if (tail) {
    const octets = tail[2].split(".").map(Number);
    text = `${tail[1]}${((octets[0] << 8) | octets[1]).toString(16)}:${((octets[2] << 8) | octets[3]).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16)));
  const head = parse(halves[0]);
  const rest = halves.length === 2 ? parse(halves[1]) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const groups = [...head, ...new Array(halves.length === 2 ? missing : 0).fill(0), ...rest];
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

/**
 * The rate-limit key of a client address: an IPv4 address as is, an IPv4-mapped IPv6 address
 * (`::ffff:a.b.c.d`) as its IPv4 address, any other IPv6 address as its /64 network
 * (`2001:db8:1:2::/64`). A zone (`%eth0`) is dropped. Anything else is returned unchanged, so a
 * missing or odd address still gets a key of its own rather than a shared one.
 */
export function rateLimitKey(ip: string): string {
  const address = ip.trim().replace(/^\[(.*)\]$/, "$1");
  if (isIPv4(address)) return address;
  const unzoned = address.replace(/%.*$/, "");
  if (!isIPv6(unzoned)) return ip;
  const groups = ipv6Groups(unzoned.toLowerCase());
  if (!groups) return ip;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join(".");
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(":")}::/64`;
}
