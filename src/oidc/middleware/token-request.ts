import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';
import { API_ROUTES } from '../provider.js';
import { single, takeFormBody } from './raw-form.js';

/**
 * Token endpoint, before the provider:
 * - a client secret in the body is refused (401 invalid_client), even next to Basic
 *   credentials: only HTTP Basic authenticates a client;
 * - `redirect_uri` is not required of the client: it is filled in from the code, so the
 *   provider's exact-string comparison is between the code's own value and itself (the
 *   URI was matched against the registration at authorization time).
 */
export function tokenRequest(provider: Provider): Middleware {
  return async (ctx, next) => {
    if (ctx.path !== API_ROUTES.token || ctx.method !== 'POST') return next();
    const body = await takeFormBody(ctx);
    if (body) {
      if (body.client_secret !== undefined) throw new errors.InvalidClient('client authentication must use HTTP Basic; a client_secret in the body is not accepted');
      const code = single(body.code);
      if (single(body.grant_type) === 'authorization_code' && code && body.redirect_uri === undefined && code.length <= 128) {
        const stored = await provider.AuthorizationCode.find(code, { ignoreExpiration: true });
        if (stored?.redirectUri) {
          const req = ctx.req as typeof ctx.req & { body?: string };
          req.body = `${req.body}&redirect_uri=${encodeURIComponent(stored.redirectUri)}`;
        }
      }
    }
    await next();
  };
}
