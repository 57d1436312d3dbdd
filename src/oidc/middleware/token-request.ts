import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';
import { API_ROUTES } from '../routes.js';
import { appendFormParameter, single, takeFormBody } from './raw-form.js';

/**
 * Token endpoint, before the provider:
 * - a missing or malformed code or code_verifier is 400 before the code is looked up;
 * - a client secret in the body is refused (401 invalid_client), even next to Basic
 *   credentials: a standard client authenticates with HTTP Basic only, a fapi2 client with a
 *   client assertion (private_key_jwt) in the body; which one a client may use is its
 *   registration's, checked by the provider;
 * - `redirect_uri` is not required of the client: it is filled in from the code, so the
 *   provider's exact-string comparison is between the code's own value and itself (the
 *   URI was matched against the registration at authorization time).
 */
export function tokenRequest(provider: Provider): Middleware {
  return async (ctx, next) => {
    if (ctx.path !== API_ROUTES.token || ctx.method !== 'POST') return next();
    const body = await takeFormBody(ctx);
    // RFC 6749 5.2: a request without client authentication is invalid_client (401), not a malformed request.
    if (!/^Basic\s/i.test(ctx.get('authorization')) && !carriesClientAssertion(body)) throw new errors.InvalidClient('client authentication by HTTP Basic is required');
    if (body) {
      if (body.client_secret !== undefined) throw new errors.InvalidClient('client authentication must use HTTP Basic; a client_secret in the body is not accepted');
      // A client-credentials token reaches the FDX Consent API alone: it carries no scope.
      if (single(body.grant_type) === 'client_credentials' && body.scope !== undefined && body.scope !== '') throw new errors.InvalidScope('a client-credentials token carries no scope: it serves the FDX Consent API only', String(body.scope));
      const code = single(body.code);
      if (single(body.grant_type) === 'authorization_code') {
        // Malformed is 400 whatever the code: checked before the code is looked up.
        if (!code) throw new errors.InvalidRequest("missing required parameter 'code'");
        const verifier = single(body.code_verifier);
        if (!verifier) throw new errors.InvalidRequest("missing required parameter 'code_verifier'");
        if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) throw new errors.InvalidRequest('code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~');
      }
      if (single(body.grant_type) === 'authorization_code' && code && body.redirect_uri === undefined && code.length <= 256) {
        const stored = await provider.AuthorizationCode.find(code, { ignoreExpiration: true });
        // An unknown code still needs a redirect_uri to get past the presence check to the
        // code lookup, which answers invalid_grant (401), not invalid_request (400).
        const redirectUri = stored?.redirectUri ?? 'urn:almoner:unknown-code';
        appendFormParameter(ctx, 'redirect_uri', redirectUri);
      }
    }
    await next();
  };
}

/** Whether a form carries a client assertion (private_key_jwt, RFC 7523 2.2): fapi2 clients authenticate so. */
export function carriesClientAssertion(body: Record<string, unknown> | undefined): boolean {
  return body?.client_assertion !== undefined || body?.client_assertion_type !== undefined;
}
