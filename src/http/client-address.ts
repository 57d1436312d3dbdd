import net from 'node:net';
import type { Context, Middleware } from 'koa';

/** Normalises IPv4-mapped IPv6 (::ffff:1.2.3.4) to plain IPv4. */
export function normaliseIp(address: string | undefined): string {
  if (!address) return '';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address;
}

/** A set of CIDR ranges (IPv4 and IPv6) that answers "is this address inside?". */
/**
 * The key that limits count a caller by: IPv6 by its /64, which one subscriber usually holds
 * whole (the sign-in throttle, the client-secret failure limits).
 */
export function addressKey(ip: string): string {
  if (net.isIPv6(ip)) {
    const [head = '', tail = ''] = ip.split('::');
    const left = head ? head.split(':') : [];
    const right = tail ? tail.split(':') : [];
    const groups = ip.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
    return `${groups
      .slice(0, 4)
      .map((g) => Number.parseInt(g || '0', 16).toString(16))
      .join(':')}::/64`;
  }
  return ip;
}

export class AddressSet {
  private readonly list = new net.BlockList();
  readonly size: number;

  constructor(ranges: readonly string[]) {
    for (const range of ranges) {
      const [address, prefix] = range.split('/') as [string, string | undefined];
      const family = net.isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) this.list.addAddress(address, family);
      else this.list.addSubnet(address, Number(prefix), family);
    }
    this.size = ranges.length;
  }

  has(address: string): boolean {
    const ip = normaliseIp(address);
    const family = net.isIP(ip);
    if (family === 0) return false;
    return this.list.check(ip, family === 6 ? 'ipv6' : 'ipv4');
  }
}

function lastListValue(header: string): string | undefined {
  const parts = header
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  return parts[parts.length - 1];
}

const IPV4_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})$/;
const IPV6_PORT = /^\[([0-9A-Fa-f:.]+)\]:(\d{1,5})$/;
const IPV6 = /^[0-9A-Fa-f:.]+$/;

const validPort = (port: string) => Number(port) <= 65_535;

/**
 * One X-Forwarded-For element, strictly: IPv4, IPv6, IPv4:port or [IPv6]:port (what
 * proxies actually write). Anything else (`unknown`, an obfuscated name, a zone id, an
 * empty element, garbage) is undefined: the walk must stop there, not skip it.
 */
export function parseHop(raw: string): string | undefined {
  const hop = raw.trim();
  if (net.isIPv4(hop)) return hop;
  if (IPV6.test(hop) && net.isIPv6(hop)) return normaliseIp(hop);
  const v4 = IPV4_PORT.exec(hop);
  if (v4 && net.isIPv4(v4[1]!) && validPort(v4[2]!)) return v4[1]!;
  const v6 = IPV6_PORT.exec(hop);
  if (v6 && net.isIPv6(v6[1]!) && validPort(v6[2]!)) return normaliseIp(v6[1]!);
  return undefined;
}

export interface ResolvedAddress {
  /** The caller's address; when `known` is false, the nearest hop we trust (for throttling and logs only). */
  ip: string;
  /** False when a trusted proxy forwarded a hop we cannot read: the caller's address is unknown. */
  known: boolean;
}

/**
 * Walks X-Forwarded-For right to left from a trusted peer: each trusted hop is one of our
 * own proxies, and the first hop that is not trusted is the caller (everything left of it
 * was written by the caller and proves nothing). An unparseable hop ends the walk too, with
 * the caller unknown; skipping it would let the caller choose the address. Several header
 * lines are one list, in order (RFC 9110 5.3).
 */
export function resolveForwarded(peer: string, forwardedFor: readonly string[], trustedProxies: AddressSet): ResolvedAddress {
  const hops = forwardedFor.flatMap((line) => line.split(','));
  let nearest = peer;
  for (let i = hops.length - 1; i >= 0; i -= 1) {
    const hop = parseHop(hops[i]!);
    if (hop === undefined) return { ip: nearest, known: false };
    if (!trustedProxies.has(hop)) return { ip: hop, known: true };
    nearest = hop;
  }
  // Every hop is one of ours (or there is none): the left-most is where the request began.
  return { ip: nearest, known: true };
}

const sets = new Map<string, AddressSet>();

/** The AddressSet of a client's ranges, built once per distinct list (the IP allow-lists, judged on every call). */
export function allowListSet(ranges: readonly string[]): AddressSet {
  const key = ranges.join(',');
  let set = sets.get(key);
  if (!set) {
    if (sets.size > 1000) sets.clear();
    set = new AddressSet(ranges);
    sets.set(key, set);
  }
  return set;
}

/**
 * Whether the caller is inside `set`, for decisions that admit (IP allow-lists, /metrics):
 * an unknown caller address is never inside anything.
 */
export function callerInside(set: AddressSet, state: { clientIp?: string; clientIpKnown?: boolean }): boolean {
  return state.clientIpKnown === true && set.has(state.clientIp ?? '');
}

/**
 * Decides who is calling and over what. The socket peer is the truth unless the peer is a
 * configured trusted proxy; only then are X-Forwarded-For (resolveForwarded) and
 * X-Forwarded-Proto (the value the nearest proxy set) believed. `Forwarded` (RFC 7239) is
 * not read. Koa's own `app.proxy` is left off because it trusts those headers from anyone.
 */
export function clientAddress(trustedProxies: AddressSet): Middleware {
  return async (ctx, next) => {
    resolveClientAddress(ctx, trustedProxies);
    await next();
  };
}

/** What clientAddress does before the rest of the request: clientIp, clientIpKnown and protocol on ctx.state (the main app's requestFrame calls it directly). */
export function resolveClientAddress(ctx: Context, trustedProxies: AddressSet): void {
  const peer = normaliseIp(ctx.req.socket.remoteAddress);
  const encrypted = Boolean((ctx.req.socket as { encrypted?: boolean }).encrypted);
  let caller: ResolvedAddress = { ip: peer, known: peer !== '' };
  let protocol: 'http' | 'https' = encrypted ? 'https' : 'http';
  if (trustedProxies.size > 0 && trustedProxies.has(peer)) {
    caller = resolveForwarded(peer, ctx.req.headersDistinct['x-forwarded-for'] ?? [], trustedProxies);
    const forwardedProto = lastListValue(ctx.get('x-forwarded-proto'))?.toLowerCase();
    if (forwardedProto === 'https' || forwardedProto === 'http') protocol = forwardedProto;
  }
  ctx.state.clientIp = caller.ip;
  ctx.state.clientIpKnown = caller.known;
  ctx.state.protocol = protocol;
}
