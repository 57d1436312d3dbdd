import type { Middleware, ParameterizedContext } from 'koa';
import { errors } from 'oidc-provider';
import { oauthProblem, sendOAuthProblem } from '../../http/problem.js';

/**
 * provider.use() middleware runs outside the provider's own error handling, so OAuth errors
 * raised there are rendered here as RFC 6749 `{error, error_description}` bodies.
 */
export function sendOAuthError(ctx: ParameterizedContext, error: InstanceType<typeof errors.OIDCProviderError>): void {
  // RFC 6749 5.2: failed client authentication is 401 (the library's class defaults to 400).
  const status = error.error === 'invalid_client' ? 401 : error.statusCode;
  const headers: Record<string, string> = error.error === 'invalid_client' ? { 'WWW-Authenticate': 'Basic realm="almoner"' } : {};
  sendOAuthProblem(ctx, oauthProblem(status, error.error_description, headers), error.error);
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
