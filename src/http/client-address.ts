import net from 'node:net';
import type { Middleware } from 'koa';

/** Normalises IPv4-mapped IPv6 (::ffff:1.2.3.4) to plain IPv4. */
export function normaliseIp(address: string | undefined): string {
  if (!address) return '';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address;
}

/** A set of CIDR ranges (IPv4 and IPv6) that answers "is this address inside?". */
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
  const parts = header.split(',').map((p) => p.trim()).filter(Boolean);
  return parts[parts.length - 1];
}

/**
 * Decides who is calling and over what. The socket peer is the truth unless the peer is a
 * configured trusted proxy; only then are X-Forwarded-For (walked from the right, skipping
 * our own proxies) and X-Forwarded-Proto (the value the nearest proxy set) believed.
 * Koa's own `app.proxy` is left off because it trusts those headers from anyone.
 */
export function clientAddress(trustedProxies: AddressSet): Middleware {
  return async (ctx, next) => {
    const peer = normaliseIp(ctx.req.socket.remoteAddress);
    const encrypted = Boolean((ctx.req.socket as { encrypted?: boolean }).encrypted);
    let clientIp = peer;
    let protocol: 'http' | 'https' = encrypted ? 'https' : 'http';
    if (trustedProxies.size > 0 && trustedProxies.has(peer)) {
      const hops = ctx.get('x-forwarded-for').split(',').map((h) => normaliseIp(h.trim())).filter((h) => net.isIP(h) !== 0);
      let chosen: string | undefined;
      for (let i = hops.length - 1; i >= 0; i -= 1) {
        chosen = hops[i];
        if (!trustedProxies.has(hops[i]!)) break;
      }
      if (chosen) clientIp = chosen;
      const forwardedProto = lastListValue(ctx.get('x-forwarded-proto'))?.toLowerCase();
      if (forwardedProto === 'https' || forwardedProto === 'http') protocol = forwardedProto;
    }
    ctx.state.clientIp = clientIp;
    ctx.state.protocol = protocol;
    await next();
  };
}
