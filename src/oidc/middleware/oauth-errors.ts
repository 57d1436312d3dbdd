import type { Middleware, ParameterizedContext } from 'koa';
import { errors } from 'oidc-provider';

/**
 * provider.use() middleware runs outside the provider's own error handling, so OAuth errors
 * raised there are rendered here as RFC 6749 `{error, error_description}` bodies.
 */
export function sendOAuthError(ctx: ParameterizedContext, error: InstanceType<typeof errors.OIDCProviderError>): void {
  // RFC 6749 5.2: failed client authentication is 401 (the library's class defaults to 400).
  ctx.status = error.error === 'invalid_client' ? 401 : error.statusCode;
  ctx.type = 'application/json';
  ctx.set('Cache-Control', 'no-store');
  if (error.error === 'invalid_client') ctx.set('WWW-Authenticate', 'Basic realm="almoner"');
  ctx.body = { error: error.error, error_description: error.error_description };
}

/** `onRefusal` hears each error rendered here (the token endpoint's announce it as grant.error). */
export function catchOAuthErrors(middleware: Middleware, onRefusal?: (ctx: ParameterizedContext, error: InstanceType<typeof errors.OIDCProviderError>) => void): Middleware {
  return async (ctx, next) => {
    try {
      await middleware(ctx, next);
    } catch (error) {
      if (error instanceof errors.OIDCProviderError && error.statusCode < 500) {
        onRefusal?.(ctx, error);
        sendOAuthError(ctx, error);
        return;
      }
      throw error;
    }
  };
}
