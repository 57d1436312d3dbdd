import net from 'node:net';
import { isPublicAddress } from './addresses.js';

export { isPublicAddress };

/**
 * Where the server may connect to on someone else's say-so: webhook targets, and a bank-data
 * client's jwks_uri (src/oidc/key-set-fetch.ts). In production only https to globally routable
 * addresses (no loopback, private, link-local or other special ranges, whatever IPv6 form they
 * are written in: server-side request forgery); the dev profile also allows http on loopback,
 * for local receivers and key sets. Checked when the address is registered and again at every
 * connection, then on every address the name resolves to, on the connection itself (send.ts,
 * guardedLookup).
 */

export function isLoopbackAddress(address: string): boolean {
  return (net.isIPv4(address) && address.startsWith('127.')) || address === '::1';
}

/** localhost and its subdomains always mean this machine (RFC 6761), whatever DNS says. */
function isLocalhostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

export type Profile = 'dev' | 'production';

/**
 * The problem with an address the server is asked to connect to, worded to follow the name of
 * the field that holds it ("must use https in production"), or undefined when it may be used.
 */
export function outboundUrlProblem(raw: string, profile: Profile): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (raw.length > 2048) return 'must be at most 2048 characters';
  if (url.username || url.password) return 'must not contain credentials';
  // The URL parser already turned 0x7f000001, 2130706433 and 127.1 into 127.0.0.1; a
  // trailing dot (localhost.) names the same host.
  const host = url.hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
  const loopback = isLocalhostName(host) || isLoopbackAddress(host);
  if (url.protocol === 'https:') {
    if (profile === 'production' && (loopback || (net.isIP(host) !== 0 && !isPublicAddress(host))))
      return 'must point to a public address in production';
    return undefined;
  }
  if (url.protocol === 'http:' && profile === 'dev' && loopback) return undefined;
  return profile === 'production' ? 'must use https in production' : 'must use https (http is allowed on loopback in the dev profile)';
}

/** The problem with a webhook target URL, or undefined when it may be used. */
export function targetProblem(raw: string, profile: Profile): string | undefined {
  const problem = outboundUrlProblem(raw, profile);
  return problem === undefined ? undefined : `url ${problem}`;
}
