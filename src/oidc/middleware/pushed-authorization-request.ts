import type { Middleware } from 'koa';
import { errors } from 'oidc-provider';
import { API_ROUTES } from '../routes.js';
import { prepareAuthorizationParams } from './authorization-request.js';
import { replaceFormBody, takeFormBody } from './raw-form.js';
import { carriesClientAssertion } from './token-request.js';

/**
 * Pushed authorization request endpoint (RFC 9126), before the provider (docs/bank-data.md,
 * "Pushed authorization requests"):
 * - it serves fapi2 clients, which must push every request and authenticate with a client
 *   assertion; a standard client (HTTP Basic) is refused there, so its requests keep going
 *   through the authorization endpoint as before;
 * - the pushed parameters get the authorization endpoint's preparation, so the same checks
 *   (requested scopes against the registration, nonce, response mode) judge them;
 * - another response_mode than query is refused here (no redirect URI is trusted yet).
 */
export function pushedAuthorizationRequest(): Middleware {
  return async (ctx, next) => {
    if (ctx.path !== API_ROUTES.pushedAuthorization || ctx.method !== 'POST') return next();
    const body = await takeFormBody(ctx);
    if (!carriesClientAssertion(body))
      throw new errors.InvalidClient(
        'pushed authorization requests are for bank-data (fapi2) clients, which authenticate with private_key_jwt',
      );
    if (body!.response_mode !== undefined && body!.response_mode !== 'query')
      throw new errors.InvalidRequest('response_mode is not supported: only response_mode=query (the default) is');
    replaceFormBody(ctx, prepareAuthorizationParams(body!));
    await next();
  };
}
