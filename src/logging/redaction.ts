/**
 * What a log line may say of an address (docs/security.md, "Secrets in logs"). Query strings
 * carry codes, tokens and secrets (an authorization response, a misplaced access_token), and a
 * few paths carry a one-time secret themselves: the dashboard's invitation and password-reset
 * links. This module knows which; the access log, the dev mail sink, the error serializer and
 * the logger's own last pass (logger.ts) all go through it.
 */

/** What stands in for a secret, as pino's redaction writes it. */
export const REDACTED = '[redacted]';

/**
 * Paths whose next segment is a secret: /invitations/<token> (and its /accept) and
 * /reset-password/<token> (src/dashboard/routes.ts), one-time secrets; and the FDX Consent
 * API's /fdx/<version>/consents/<consentId> (and its /revocation), whose consent id is the
 * unguessable handle a data recipient reads and revokes a consent by (src/gateway/fdx/
 * consent-routes.ts). Every other path parameter of every host is an identifier
 * (test/logging/redaction.test.ts walks the routes to hold this).
 */
const SECRET_AFTER: readonly (readonly (string | RegExp)[])[] = [['invitations'], ['reset-password'], ['fdx', /^v\d+$/, 'consents']];

/**
 * Our credentials by their own shape, wherever a caller puts them (a path segment where an id
 * belongs, an error message): API keys (src/api-keys/format.ts) and webhook signing
 * secrets (src/webhooks/signing-secret.ts). Other tokens have no shape of their own.
 */
const CREDENTIAL = /alm_(?:live|test)_[A-Za-z0-9]+|whsec_[A-Za-z0-9+/]+={0,2}/g;

/** A secret page's segments and the one after them, in text that is no parsable URL. */
const SECRET_SEGMENT = /(\/(?:invitations|reset-password|fdx\/+v\d+\/+consents)\/+)[^/?#]+/gi;

/** How many leading segments name a secret page (the secret follows them), or 0. */
function secretPageLength(segments: readonly string[]): number {
  const page = SECRET_AFTER.find(
    (prefix) =>
      segments.length >= prefix.length &&
      prefix.every((part, i) => (typeof part === 'string' ? segments[i]!.toLowerCase() === part : part.test(segments[i]!.toLowerCase()))),
  );
  return page?.length ?? 0;
}

/** A segment as the router reads it; a malformed escape stays as it was. */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * A request path fit for a log line: the secret segment of an invitation or reset link, or of
 * a Consent API path, becomes [redacted] (the page stays named: /invitations/[redacted]/accept,
 * /fdx/v6/consents/[redacted]/revocation), however the path is spelt (any case, escaped,
 * doubled or escaped slashes), and credentials of a known shape are hidden anywhere in it.
 * Every other path comes back as it was.
 */
export function redactPath(path: string): string {
  const segments = path
    .split('/')
    .flatMap((segment) => decoded(segment).split('/'))
    .filter((segment) => segment !== '');
  const length = secretPageLength(segments);
  if (length > 0) {
    const page = segments.slice(0, length).map((segment) => segment.toLowerCase());
    const [secret, ...rest] = segments.slice(length);
    return `/${[...page, ...(secret === undefined ? [] : [REDACTED]), ...rest].join('/')}`.replace(CREDENTIAL, REDACTED);
  }
  return path.replace(CREDENTIAL, REDACTED);
}

/** An absolute URL fit for a log line: its path as redactPath leaves it, its query and fragment replaced. */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not a URL the parser takes: keep what comes before any query or fragment, with the
    // secret pages' next segment and credentials hidden.
    const at = url.search(/[?#]/);
    const head = (at === -1 ? url : url.slice(0, at)).replace(SECRET_SEGMENT, `$1${REDACTED}`).replace(CREDENTIAL, REDACTED);
    return at === -1 ? head : `${head}${url[at]}${REDACTED}`;
  }
  const query = parsed.search ? `?${REDACTED}` : '';
  const fragment = parsed.hash ? `#${REDACTED}` : '';
  return `${parsed.origin}${redactPath(parsed.pathname)}${query}${fragment}`;
}

/**
 * An absolute http(s) URL, or a root-relative path in prose (after the start, a space, a quote,
 * a bracket, `=` or `:`; never the `//` of a URL): the places a secret path or a query hides in.
 */
const LOCATION = /\bhttps?:\/\/[^\s"'<>`]+|(?<=^|[\s"'([=:])\/(?!\/)[^\s"'<>`()]*/gi;

/** One root-relative path (with its query, if any) fit for a log line. */
function redactRelative(path: string): string {
  const at = path.search(/[?#]/);
  if (at === -1) return redactPath(path);
  return `${redactPath(path.slice(0, at))}${path[at]}${REDACTED}`;
}

/**
 * Free text (an error's message or stack, a reason, a message) fit for a log line: every URL
 * and every path in it as redactUrl and redactPath leave them, queries replaced, credentials of
 * a known shape hidden. Text without any comes back as it was.
 */
export function redactText(text: string): string {
  return text.replace(LOCATION, (found) => (found[0] === '/' ? redactRelative(found) : redactUrl(found))).replace(CREDENTIAL, REDACTED);
}

/**
 * A value about to be logged, with redactText applied to every string in it (plain objects and
 * arrays, a few levels deep). Anything else (an Error, a Date, a Buffer) passes untouched:
 * errors get their own serializer (error-serializer.ts), which redacts what it keeps.
 */
export function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactText(value);
  if (depth >= 4 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => redactValue(item, depth + 1));
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = redactValue(item, depth + 1);
  return out;
}
