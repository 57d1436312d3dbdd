import net from 'node:net';
import { AddressSet } from '../http/client-address.js';

/**
 * Webhook targets. In production only https to public addresses (no loopback, private,
 * link-local or other special ranges: server-side request forgery); the dev profile also
 * allows http on loopback, for local receivers. Checked when a subscription is written and
 * again, against the resolved address, at every delivery.
 */
const NOT_PUBLIC = new AddressSet([
  '0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24', '192.0.2.0/24',
  '192.168.0.0/16', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '224.0.0.0/4', '240.0.0.0/4',
  // (IPv4-mapped IPv6 is normalised to IPv4 before the check, so ::ffff:0:0/96 needs no entry:
  // Node's BlockList would also match every plain IPv4 address against it.)
  '::/128', '::1/128', '64:ff9b::/96', '100::/64', '2001:db8::/32', 'fc00::/7', 'fe80::/10', 'ff00::/8',
]);

export function isPublicAddress(address: string): boolean {
  return net.isIP(address) !== 0 && !NOT_PUBLIC.has(address);
}

export function isLoopbackAddress(address: string): boolean {
  return (net.isIPv4(address) && address.startsWith('127.')) || address === '::1';
}

export type Profile = 'dev' | 'production';

/** The problem with a target URL, or undefined when it may be used. */
export function targetProblem(raw: string, profile: Profile): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute URL';
  }
  if (raw.length > 2048) return 'url must be at most 2048 characters';
  if (url.username || url.password) return 'url must not contain credentials';
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const loopback = host === 'localhost' || isLoopbackAddress(host);
  if (url.protocol === 'https:') {
    if (profile === 'production' && (loopback || (net.isIP(host) !== 0 && !isPublicAddress(host)))) return 'url must point to a public address in production';
    return undefined;
  }
  if (url.protocol === 'http:' && profile === 'dev' && loopback) return undefined;
  return profile === 'production' ? 'url must use https in production' : 'url must use https (http is allowed for loopback receivers in the dev profile)';
}
