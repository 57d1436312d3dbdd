import type { Middleware, ParameterizedContext } from 'koa';
import { errors } from 'oidc-provider';

/**
 * provider.use() middleware runs outside the provider's own error handling, so OAuth errors
 * raised there are rendered here as RFC 6749 `{error, error_description}` bodies.
 */
export function sendOAuthError(ctx: ParameterizedContext, error: InstanceType<typeof errors.OIDCProviderError>): void {
  ctx.status = error.statusCode;
  ctx.type = 'application/json';
  ctx.set('Cache-Control', 'no-store');
  if (error.statusCode === 401 && error.error === 'invalid_client') ctx.set('WWW-Authenticate', 'Basic realm="almoner"');
  ctx.body = { error: error.error, error_description: error.error_description };
}

export function catchOAuthErrors(middleware: Middleware): Middleware {
  return async (ctx, next) => {
    try {
      await middleware(ctx, next);
    } catch (error) {
      if (error instanceof errors.OIDCProviderError && error.statusCode < 500) {
        sendOAuthError(ctx, error);
        return;
      }
      throw error;
    }
  };
}
