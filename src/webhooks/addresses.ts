import net from 'node:net';

/**
 * Which IP addresses a webhook may be delivered to: globally routable unicast only (against
 * server-side request forgery). The tables follow the IANA IPv4 and IPv6 Special-Purpose
 * Address Registries (every range not marked globally reachable), plus multicast, and for IPv6
 * an allow-list of the global unicast block 2000::/3 so that deprecated or unallocated space
 * (site-local fec0::/10, 1::/16, 4000::/3 …) is refused without a table entry of its own.
 *
 * IPv6 forms that carry an IPv4 address (IPv4-compatible, -mapped, -translated, NAT64 64:ff9b::/96,
 * 6to4, Teredo) are judged by the IPv4 address they carry, so [::ffff:0:a9fe:a9fe] is as
 * forbidden as 169.254.169.254. net.BlockList holds the ranges; each family has its own list
 * and is only ever checked with its own family, because BlockList also matches IPv4-mapped
 * IPv6 against IPv4 rules (and the reverse), which would blur the two tables.
 */

function blockList(family: 'ipv4' | 'ipv6', ranges: readonly string[]): net.BlockList {
  const list = new net.BlockList();
  for (const range of ranges) {
    const [address, prefix] = range.split('/') as [string, string];
    list.addSubnet(address, Number(prefix), family);
  }
  return list;
}

const IPV4_NOT_GLOBAL = blockList('ipv4', [
  '0.0.0.0/8', // "this network"
  '10.0.0.0/8', // private
  '100.64.0.0/10', // shared address space (carrier-grade NAT)
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local (cloud metadata services live here)
  '172.16.0.0/12', // private
  '192.0.0.0/24', // IETF protocol assignments (its two anycast /32s are no webhook receivers either)
  '192.0.2.0/24', // documentation (TEST-NET-1)
  '192.88.99.0/24', // deprecated 6to4 relay anycast
  '192.168.0.0/16', // private
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // documentation (TEST-NET-2)
  '203.0.113.0/24', // documentation (TEST-NET-3)
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, and 255.255.255.255 broadcast
]);

/** IPv6 global unicast is allocated from 2000::/3 only. */
const IPV6_GLOBAL_UNICAST = blockList('ipv6', ['2000::/3']);

/** Special-purpose ranges inside 2000::/3 that are not globally reachable. */
const IPV6_NOT_GLOBAL = blockList('ipv6', [
  '2001::/23', // IETF protocol assignments: benchmarking, ORCHID, anycast services (Teredo is judged before)
  '2001:db8::/32', // documentation
  '3fff::/20', // documentation
]);

/** The eight 16-bit groups of an IPv6 address (a trailing dotted quad folded in), or undefined. */
function ipv6Groups(address: string): number[] | undefined {
  if (!net.isIPv6(address) || address.includes('%')) return undefined;
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const front = parse(head);
  if (tail === undefined) return front;
  const back = parse(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

function ipv4From(high: number, low: number): string {
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/**
 * The IPv4 addresses an IPv6 address carries and would reach, or undefined when it is not a
 * transition form. Teredo (2001::/32) carries two: the server (bits 32–63) and the client,
 * stored inverted in the last 32 bits; both must be public.
 */
function embeddedIpv4(groups: readonly number[]): string[] | undefined {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number];
  const zeroUpTo = (n: number) => groups.slice(0, n).every((g) => g === 0);
  // ::/96 IPv4-compatible (deprecated; also :: and ::1, whose "IPv4" 0.0.0.x is refused).
  if (zeroUpTo(6)) return [ipv4From(g6, g7)];
  // ::ffff:0:0/96 IPv4-mapped.
  if (zeroUpTo(5) && g5 === 0xffff) return [ipv4From(g6, g7)];
  // ::ffff:0:0:0/96 IPv4-translated (SIIT).
  if (zeroUpTo(4) && g4 === 0xffff && g5 === 0) return [ipv4From(g6, g7)];
  // 64:ff9b::/96 the well-known NAT64 prefix.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return [ipv4From(g6, g7)];
  // 2002::/16 6to4: the IPv4 address follows the prefix.
  if (g0 === 0x2002) return [ipv4From(g1, g2)];
  // 2001::/32 Teredo.
  if (g0 === 0x2001 && g1 === 0) return [ipv4From(g2, g3), ipv4From(g6 ^ 0xffff, g7 ^ 0xffff)];
  return undefined;
}

function isPublicIpv4(address: string): boolean {
  return !IPV4_NOT_GLOBAL.check(address, 'ipv4');
}

/**
 * Whether `address` (an IP literal) is globally routable unicast. Anything else — names,
 * scoped addresses (fe80::1%eth0), the local-use NAT64 prefix 64:ff9b:1::/48 (not globally
 * reachable, and its IPv4 position depends on a prefix length only the local network knows) —
 * is refused.
 */
export function isPublicAddress(address: string): boolean {
  if (net.isIPv4(address)) return isPublicIpv4(address);
  const groups = ipv6Groups(address);
  if (!groups || groups.length !== 8) return false;
  const carried = embeddedIpv4(groups);
  if (carried) return carried.every(isPublicIpv4);
  const canonical = groups.map((g) => g.toString(16)).join(':');
  return IPV6_GLOBAL_UNICAST.check(canonical, 'ipv6') && !IPV6_NOT_GLOBAL.check(canonical, 'ipv6');
}
