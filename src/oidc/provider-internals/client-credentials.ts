/**
 * A client id and secret read as oidc-provider reads them (lib/shared/client_auth.js), so the
 * secret our check verifies before the provider (middleware/client-secret-check.ts) is the one
 * the library then compares (compareClientSecret): an `Authorization: Basic` value split on its
 * one space, base64 decoded, cut at its first colon, each part form-urlencoded ('+' a space),
 * and only visible ASCII in either (lib/consts/client_attributes.js, noVSCHAR). Tripwire:
 * test/oidc/provider-internals.test.ts ("client credentials: client_auth.js reads a Basic value
 * and the form this way").
 */

/** What the library accepts in a client id or secret. */
export const VISIBLE_CREDENTIAL = /^[\x20-\x7e]*$/;

/** One form-urlencoded part of a Basic value (RFC 6749 2.3.1), as the library decodes it; undefined when it does not. */
function decodePart(part: string): string | undefined {
  try {
    const decoded = decodeURIComponent(part.replace(/\+/g, '%20'));
    return VISIBLE_CREDENTIAL.test(decoded) ? decoded : undefined;
  } catch {
    return undefined;
  }
}

/** An `Authorization: Basic …` value's client id and secret, read as lib/shared/client_auth.js reads them. */
export function basicCredentials(authorization: string): { clientId: string; secret: string } | undefined {
  const parts = authorization.split(' ');
  if (parts.length !== 2 || parts[0]!.toLowerCase() !== 'basic' || !/^[A-Za-z0-9+/]+={0,2}$/.test(parts[1]!)) return undefined;
  const decoded = Buffer.from(parts[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return undefined;
  const clientId = decodePart(decoded.slice(0, colon));
  const secret = decodePart(decoded.slice(colon + 1));
  return clientId && secret ? { clientId, secret } : undefined;
}
