import type { Middleware } from 'koa';
import { errors } from 'oidc-provider';
import { isWellFormedBasic } from '../../http/basic-credentials.js';
import { challengeFor } from '../../http/oauth-problem.js';
import { headerCount } from '../../http/repeated-header.js';
import { API_ROUTES } from '../routes.js';
import { oidcState } from '../request-scope.js';
import { takeFormBody } from './raw-form.js';
import { carriesClientAssertion } from './token-request.js';

/**
 * Every 401 of the provider carries WWW-Authenticate (RFC 9110 15.5.2), built from the refusal
 * the request is answered with (ctx.state.oidc.refusal; http/oauth-problem.ts, challengeFor):
 * where the client authenticates (the token endpoint's chain and clientAuthentication mark
 * the request so) a Basic challenge with the OAuth error, for a failed client authentication as
 * for the 401 invalid_grant (docs/oauth.md, "OAuth 2.0 and OpenID Connect", Token endpoint);
 * UserInfo keeps the library's Bearer challenge (RFC 6750 3), and gets one if a 401 lacks it.
 */
export function authenticationChallenge(issuer: string): Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.status !== 401) return;
    const state = ctx.state.oidc;
    const challenge = challengeFor(issuer, state?.clientAuthenticates === true, state?.refusal, ctx.response.get('WWW-Authenticate'));
    if (challenge !== undefined) ctx.set('WWW-Authenticate', challenge);
  };
}

/** The endpoints besides the token endpoint (which has its own chain) where the client authenticates with HTTP Basic. */
const CLIENT_AUTHENTICATED: ReadonlySet<string> = new Set([
  API_ROUTES.introspection,
  API_ROUTES.revocation,
  API_ROUTES.pushedAuthorization,
]);

/**
 * Introspection, revocation and pushed requests: bad client credentials are invalid_client
 * (401), as docs/oauth.md, "OAuth 2.0 and OpenID Connect" (Every 401 carries WWW-Authenticate)
 * states and RFC 6749 5.2 describes ("client authentication failed"), not the library's 400
 * invalid_request: a request without HTTP Basic credentials (or a fapi2 client's assertion), and
 * a Basic value that is not base64 of a non-empty `id:secret`. Several Authorization headers are
 * invalid_request (400): which client is meant is not ours to guess (docs/security.md, "Two
 * credentials in one request").
 */
export function clientAuthentication(): Middleware {
  return async (ctx, next) => {
    if (CLIENT_AUTHENTICATED.has(ctx.path)) oidcState(ctx).clientAuthenticates = true;
    if (ctx.method === 'POST' && CLIENT_AUTHENTICATED.has(ctx.path)) {
      if (headerCount(ctx.req, 'authorization') > 1) throw new errors.InvalidRequest('the Authorization header must be sent once');
      const authorization = ctx.get('authorization');
      const basic = /^Basic(\s|$)/i.test(authorization);
      // A fapi2 client authenticates with a client assertion in the form (private_key_jwt).
      const assertion = !basic && carriesClientAssertion(await takeFormBody(ctx));
      if (!basic && !assertion) throw new errors.InvalidClient('client authentication by HTTP Basic is required');
      if (basic && authorization.trim().length > 'Basic'.length && !isWellFormedBasic(authorization)) {
        throw new errors.InvalidClient('the HTTP Basic credentials are not base64 of a client id and secret');
      }
    }
    await next();
  };
}
