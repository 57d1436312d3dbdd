/**
 * HTTP Basic client credentials as the OAuth endpoints take them: RFC 7617, with RFC 6749
 * 2.3.1's form-urlencoding of the id and the secret.
 */

/** A form-urlencoded Basic part, or undefined when it cannot be decoded. */
function decodePart(part: string): string | undefined {
  try {
    return decodeURIComponent(part.replace(/\+/g, '%20'));
  } catch {
    return undefined;
  }
}

/**
 * Whether an `Authorization: Basic …` value holds a client id and a secret as RFC 7617 and
 * RFC 6749 2.3.1 shape them: strict base64 of `id:secret`, both non-empty and both decodable.
 */
export function isWellFormedBasic(header: string): boolean {
  const match = /^Basic +([A-Za-z0-9+/]+={0,2})$/i.exec(header.trim());
  if (!match || match[1]!.length % 4 !== 0) return false;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0 || colon === decoded.length - 1) return false;
  const id = decodePart(decoded.slice(0, colon));
  const secret = decodePart(decoded.slice(colon + 1));
  return Boolean(id && secret);
}

/**
 * The client id an `Authorization: Basic …` value claims, for the logs of a refused request
 * (not yet authenticated); undefined unless it is a plausible id (printable, no spaces, at most
 * 128 characters), so the logs never carry arbitrary text from the header.
 */
export function claimedClientId(header: string): string | undefined {
  const match = /^Basic +([A-Za-z0-9+/]+={0,2})$/i.exec(header.trim());
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const id = colon > 0 ? decodePart(decoded.slice(0, colon)) : undefined;
  return id && /^[\x21-\x7e]{1,128}$/.test(id) ? id : undefined;
}
