import type { Environment } from '../../db/schema.js';

/**
 * Redirect-URI rules (docs/oauth.md, "OAuth 2.0 and OpenID Connect", Redirect URIs), applied at
 * registration and again at authorization: https; a host; a path beyond "/"; no query, fragment or
 * user info; at most 255 characters. The sandbox also accepts http on loopback hosts.
 */
export const MAX_REDIRECT_URIS = 5;
export const MAX_REDIRECT_URI_LENGTH = 255;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The URI as written: scheme, host and path exactly as the caller typed them. The WHATWG
 * parser forgives a lot (a backslash for a slash, "https:host" without "//", numeric IPv4
 * spellings), so a URI is only accepted when what it says and what the parser reads agree.
 */
const RAW = /^([a-z][a-z0-9+.-]*):\/\/([^/?#@]*@)?([^/?#]*)(\/[^?#]*)?/i;

/** The first rule the URI breaks, or undefined when it is acceptable. */
export function redirectUriProblem(uri: string, environment: Environment): string | undefined {
  if (uri.length > MAX_REDIRECT_URI_LENGTH) return `must be at most ${MAX_REDIRECT_URI_LENGTH} characters`;
  if (/\s/.test(uri)) return 'must not contain white space';
  if (uri.includes('\\')) return 'must not contain a backslash';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URL';
  }
  const raw = RAW.exec(uri);
  if (!raw) return 'must be an absolute URL of the form scheme://host/path';
  const rawHost = (raw[3] ?? '').toLowerCase().replace(/:\d*$/, '');
  if (raw[2]) return 'must not contain user info';
  if (rawHost !== url.hostname) return 'must name its host in canonical form (lower-case ASCII, a dotted IPv4 or a bracketed IPv6 address)';
  const loopbackHttp = environment === 'sandbox' && url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol !== 'https:' && !loopbackHttp) {
    return environment === 'sandbox' ? 'must use https (http only for localhost, 127.0.0.1 or [::1] in the sandbox)' : 'must use https';
  }
  if (!url.hostname) return 'must have a host';
  if (url.username || url.password || /^[a-z]+:\/\/[^/]*@/i.test(uri)) return 'must not contain user info';
  if (uri.includes('?') || url.search) return 'must not have a query string';
  if (uri.includes('#')) return 'must not have a fragment';
  if (url.pathname === '/' || url.pathname === '') return 'must have a path beyond "/"';
  if (uri.includes('*')) return 'must not contain wildcards';
  return undefined;
}

export function redirectUrisProblem(uris: readonly string[], environment: Environment): string | undefined {
  if (uris.length < 1) return 'at least one redirect URI is required';
  if (uris.length > MAX_REDIRECT_URIS) return `at most ${MAX_REDIRECT_URIS} redirect URIs per client`;
  for (const uri of uris) {
    const problem = redirectUriProblem(uri, environment);
    if (problem) return `${uri}: ${problem}`;
  }
  return undefined;
}

/**
 * Comparison form: scheme and host lower-cased and the scheme's default port dropped (what
 * the WHATWG URL parser does), the path kept exactly as written.
 */
function comparable(uri: string): string | undefined {
  try {
    const url = new URL(uri);
    // Paths compare exactly, so take the path as the caller wrote it, not as normalised.
    const rawPath = RAW.exec(uri)?.[4] ?? '';
    return `${url.protocol}//${url.host}${rawPath}`;
  } catch {
    return undefined;
  }
}

/** True when `requested` equals a registered URI under the matching rules; never a pattern. */
export function redirectUriMatches(requested: string, registered: readonly string[], environment: Environment): boolean {
  if (redirectUriProblem(requested, environment)) return false;
  const wanted = comparable(requested);
  return wanted !== undefined && registered.some((uri) => comparable(uri) === wanted);
}
