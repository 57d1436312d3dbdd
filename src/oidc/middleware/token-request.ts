import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';
import { isWellFormedBasic } from '../../http/basic-credentials.js';
import { headerCount } from '../../http/repeated-header.js';
import { findAuthorizationCodeEvenExpired } from '../provider-internals.js';
import { appendFormParameter, formOf, single } from './raw-form.js';
import type { RequestCheck } from './steps.js';

/**
 * The token endpoint's checks before the provider (stack/token-endpoint.ts runs the synchronous
 * ones together, steps.ts, checksStep); each reads the form its chain read once (raw-form.ts, formOf).
 */

/** Whether a form carries a client assertion (private_key_jwt, RFC 7523 2.2): fapi2 clients authenticate so. */
export function carriesClientAssertion(body: Record<string, unknown> | undefined): boolean {
  return body?.client_assertion !== undefined || body?.client_assertion_type !== undefined;
}

/**
 * Node keeps the first of several Authorization headers: which client is meant is not ours to
 * guess (docs/security.md, "Two credentials in one request"), so several are invalid_request.
 */
export function singleAuthorizationHeader(): RequestCheck {
  return (ctx) => {
    if (headerCount(ctx.req, 'authorization') > 1) throw new errors.InvalidRequest('the Authorization header must be sent once');
  };
}

/**
 * A Basic value that is not base64 of a non-empty `id:secret` (an empty secret, no colon, a
 * broken percent-encoding) is a failed client authentication, invalid_client (401; RFC 6749
 * 5.2), not the library's 400 invalid_request. Checked before the form is read.
 */
export function wellFormedBasicCredentials(): RequestCheck {
  return (ctx) => {
    const authorization = ctx.get('authorization');
    if (/^Basic(\s|$)/i.test(authorization) && authorization.trim().length > 'Basic'.length && !isWellFormedBasic(authorization)) {
      throw new errors.InvalidClient('the HTTP Basic credentials are not base64 of a client id and secret');
    }
  };
}

/**
 * Client authentication as the token endpoint takes it (RFC 6749 5.2: a request without it is
 * invalid_client, 401, not a malformed request): HTTP Basic for a standard client, a client
 * assertion (private_key_jwt) in the form for a fapi2 client; which one a client may use is
 * its registration's, checked by the provider. A client secret in the body is refused, even
 * next to Basic credentials.
 */
export function requireClientAuthentication(): RequestCheck {
  return (ctx) => {
    const form = formOf(ctx);
    if (!/^Basic\s/i.test(ctx.get('authorization')) && !carriesClientAssertion(form))
      throw new errors.InvalidClient('client authentication by HTTP Basic is required');
    if (form?.client_secret !== undefined)
      throw new errors.InvalidClient('client authentication must use HTTP Basic; a client_secret in the body is not accepted');
  };
}

/** A client-credentials token reaches the FDX Consent API alone: it carries no scope. */
export function clientCredentialsWithoutScope(): RequestCheck {
  return (ctx) => {
    const form = formOf(ctx);
    if (form && single(form.grant_type) === 'client_credentials' && form.scope !== undefined && form.scope !== '') {
      throw new errors.InvalidScope('a client-credentials token carries no scope: it serves the FDX Consent API only', String(form.scope));
    }
  };
}

/** A missing or malformed code or code_verifier is 400 whatever the code: checked before the code is looked up. */
export function wellFormedCodeExchange(): RequestCheck {
  return (ctx) => {
    const form = formOf(ctx);
    if (form && single(form.grant_type) === 'authorization_code') {
      if (!single(form.code)) throw new errors.InvalidRequest("missing required parameter 'code'");
      const verifier = single(form.code_verifier);
      if (!verifier) throw new errors.InvalidRequest("missing required parameter 'code_verifier'");
      if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier))
        throw new errors.InvalidRequest('code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~');
    }
  };
}

/**
 * `redirect_uri` is not required of the client: it is filled in from the code, so the
 * provider's exact-string comparison is between the code's own value and itself (the URI was
 * matched against the registration at authorization time).
 */
export function redirectUriFromCode(provider: Provider): Middleware {
  return async (ctx, next) => {
    const form = formOf(ctx);
    const code = form ? single(form.code) : undefined;
    if (form && single(form.grant_type) === 'authorization_code' && code && form.redirect_uri === undefined && code.length <= 256) {
      const stored = await findAuthorizationCodeEvenExpired(provider, code);
      // An unknown code still needs a redirect_uri to get past the presence check to the
      // code lookup, which answers invalid_grant (401), not invalid_request (400).
      appendFormParameter(ctx, 'redirect_uri', stored?.redirectUri ?? 'urn:almoner:unknown-code');
    }
    await next();
  };
}
