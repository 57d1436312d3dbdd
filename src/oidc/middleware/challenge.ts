import type { Middleware } from 'koa';
import { errors } from 'oidc-provider';
import { headerCount } from '../../http/repeated-header.js';
import { API_ROUTES } from '../routes.js';
import { takeFormBody } from './raw-form.js';
import { carriesClientAssertion } from './token-request.js';

/** The endpoints where the client authenticates with HTTP Basic (client_secret_basic). */
const CLIENT_AUTHENTICATED: ReadonlySet<string> = new Set([API_ROUTES.token, API_ROUTES.introspection, API_ROUTES.revocation, API_ROUTES.pushedAuthorization]);

/** An auth-param value as a quoted-string (RFC 9110 5.6.4); undefined when it cannot be one. */
function quoted(value: string): string | undefined {
  if (!/^[\x20-\x7e]*$/.test(value)) return undefined;
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** `Scheme name="value", …`, leaving out parameters that are absent or cannot be quoted. */
export function formatChallenge(scheme: string, parameters: Record<string, string | undefined>): string {
  const rendered = Object.entries(parameters).flatMap(([name, value]) => {
    const q = value === undefined ? undefined : quoted(value);
    return q === undefined ? [] : [`${name}=${q}`];
  });
  return rendered.length ? `${scheme} ${rendered.join(', ')}` : scheme;
}

/**
 * Every 401 of the provider carries WWW-Authenticate (RFC 9110 15.5.2). Where the client
 * authenticates (token, introspection, revocation) it is a Basic challenge, the scheme those
 * endpoints accept (RFC 6749 5.2), with the OAuth error: for a failed client authentication as for
 * the 401 invalid_grant (docs/oauth.md, "OAuth 2.0 and OpenID Connect", Token endpoint). The
 * library's own challenges there (realm = issuer, only when an Authorization header was sent) and
 * ours are replaced by one of the same shape. UserInfo keeps the library's Bearer challenge (RFC
 * 6750 3), and gets one if a 401 ever lacks it.
 */
export function authenticationChallenge(issuer: string): Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.status !== 401) return;
    const body = (ctx.body && typeof ctx.body === 'object' ? ctx.body : {}) as { error?: unknown; error_description?: unknown };
    const error = typeof body.error === 'string' ? body.error : undefined;
    const description = typeof body.error_description === 'string' ? body.error_description : undefined;
    if (CLIENT_AUTHENTICATED.has(ctx.path)) {
      ctx.set('WWW-Authenticate', formatChallenge('Basic', { realm: issuer, error: error ?? 'invalid_client', error_description: description }));
    } else if (!ctx.response.get('WWW-Authenticate')) {
      ctx.set('WWW-Authenticate', formatChallenge('Bearer', { realm: issuer, error: error ?? 'invalid_token', error_description: description }));
    }
  };
}

/** The endpoints' form-urlencoded Basic parts (RFC 6749 2.3.1), or undefined when one cannot be decoded. */
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

/**
 * Bad client credentials are invalid_client (401) at every client-authenticated endpoint, as
 * docs/oauth.md, "OAuth 2.0 and OpenID Connect" (Every 401 carries WWW-Authenticate) states
 * and RFC 6749 5.2 describes ("client authentication failed"), not the library's 400 invalid_request:
 * introspection and revocation without HTTP Basic credentials (as at the token endpoint), and a
 * Basic value that is not base64 of a non-empty `id:secret` anywhere (an empty secret, no colon, a
 * broken percent-encoding). Several Authorization headers are invalid_request (400).
 */
export function basicClientAuthentication(): Middleware {
  return async (ctx, next) => {
    if (ctx.method === 'POST' && CLIENT_AUTHENTICATED.has(ctx.path)) {
      // Node keeps the first of several Authorization headers: which client is meant is not ours
      // to guess (docs/security.md, "Two credentials in one request").
      if (headerCount(ctx.req, 'authorization') > 1) throw new errors.InvalidRequest('the Authorization header must be sent once');
      const authorization = ctx.get('authorization');
      const basic = /^Basic(\s|$)/i.test(authorization);
      // A fapi2 client authenticates with a client assertion in the form (private_key_jwt).
      const assertion = !basic && carriesClientAssertion(await takeFormBody(ctx));
      if (!basic && !assertion && ctx.path !== API_ROUTES.token) throw new errors.InvalidClient('client authentication by HTTP Basic is required');
      if (basic && authorization.trim().length > 'Basic'.length && !isWellFormedBasic(authorization)) {
        throw new errors.InvalidClient('the HTTP Basic credentials are not base64 of a client id and secret');
      }
    }
    await next();
  };
}
