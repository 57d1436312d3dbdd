import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';
import { findRefreshTokenEvenExpired } from '../provider-internals.js';
import { formOf, replaceFormBody, single } from './raw-form.js';

/**
 * Token endpoint, refresh_token grant: `offline_access` in a refresh request's `scope` is
 * accepted whether or not the authorization holds it. Clients (mod_auth_openidc, Authlib,
 * requests-oauthlib) send their original scope again on refresh; refresh tokens are issued
 * regardless of offline_access, so naming it asks for nothing. When the refresh token does
 * not carry it, it is taken out of the request before the provider compares the requested
 * scope with the token's (which would answer invalid_scope). Any other scope beyond the
 * token's is still the provider's invalid_scope.
 *
 * A step inside the token endpoint's unit of work (unit-of-work.ts), so the refresh token read here is the request's single read,
 * reused by the provider.
 */
export function refreshScope(provider: Provider): Middleware {
  return async (ctx, next) => {
    const body = formOf(ctx);
    const scope = body ? single(body.scope) : undefined;
    const value = body ? single(body.refresh_token) : undefined;
    if (!body || single(body.grant_type) !== 'refresh_token' || !scope || !value || value.length > 256) return next();
    const requested = scope.split(' ');
    if (!requested.includes('offline_access')) return next();
    const token = await findRefreshTokenEvenExpired(provider, value);
    // An unknown token is left for the provider to refuse as it does.
    if (!token || token.scopes.has('offline_access')) return next();
    replaceFormBody(ctx, { ...body, scope: requested.filter((s) => s !== 'offline_access').join(' ') });
    return next();
  };
}
