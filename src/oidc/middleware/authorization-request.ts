import type { Middleware } from 'koa';

/**
 * Authorization endpoint, before the provider.
 * - `nonce` is required on every request, with or without openid. The library rejects a
 *   nonce without openid, so there it travels as `x_nonce` and the `nonce` validator
 *   accepts either (provider.ts).
 * - The raw `scope` is copied to `x_requested_scope`, validated against the client's
 *   registration after the redirect URI is known, because the library silently drops
 *   unknown scopes and `offline_access` before its own check.
 */
export function authorizationRequest(authorizationPath: string): Middleware {
  return async (ctx, next) => {
    if (ctx.path !== authorizationPath || ctx.method !== 'GET') return next();
    const query = { ...ctx.query } as Record<string, string | string[] | undefined>;
    delete query.x_nonce;
    delete query.x_requested_scope;
    const scope = typeof query.scope === 'string' ? query.scope : undefined;
    if (scope !== undefined) query.x_requested_scope = scope;
    const scopes = (scope ?? '').split(' ');
    if (!scopes.includes('openid') && query.nonce !== undefined) {
      query.x_nonce = query.nonce;
      delete query.nonce;
    }
    ctx.query = query;
    await next();
  };
}
