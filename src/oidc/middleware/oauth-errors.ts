import type { Middleware, ParameterizedContext } from 'koa';
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';
import { sendOAuthRefusal, type OAuthRefusal } from '../../http/oauth-problem.js';
import { onProviderEvent, REFUSAL_EVENTS, renderedRefusal } from '../provider-internals.js';
import { oidcState } from '../request-scope.js';

type ProviderError = InstanceType<typeof errors.OIDCProviderError>;

/**
 * provider.use() middleware runs outside the provider's own error handling, so OAuth errors
 * raised there are rendered here (http/oauth-problem.ts) as RFC 6749 `{error, error_description}`
 * bodies, and kept as the request's refusal (its 401 challenge is built from it).
 */
export function sendOAuthError(ctx: ParameterizedContext, error: ProviderError): void {
  oidcState(ctx).refusal = sendOAuthRefusal(ctx as Parameters<typeof sendOAuthRefusal>[0], error);
}

/** `onRefusal` hears each error rendered here (the token endpoint's announce it as grant.error). */
export function catchOAuthErrors(
  middleware: Middleware,
  onRefusal?: (ctx: ParameterizedContext, error: ProviderError) => void,
): Middleware {
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

/** A step of an endpoint's chain: the refusals the steps after it raise, answered as above. */
export function answerRefusals(onRefusal?: (ctx: ParameterizedContext, error: ProviderError) => void): Middleware {
  return catchOAuthErrors((_ctx, next) => next(), onRefusal);
}

/**
 * Keeps each refusal the provider announces as the request's refusal, the error object as
 * the library rendered it (provider-internals.ts, renderedRefusal), so
 * what we add to the answer (the token endpoint's mapping, a 401's challenge) is built from the
 * error, not read back from the body.
 */
export function recordRefusals(provider: Provider): void {
  const record = (ctx: { state?: unknown } | undefined, error: Partial<ProviderError> | undefined) => {
    if (!ctx?.state || !error) return;
    const refusal: OAuthRefusal = renderedRefusal(error);
    oidcState(ctx).refusal = refusal;
  };
  // The events' names are the library's (provider-internals.ts, REFUSAL_EVENTS).
  for (const event of REFUSAL_EVENTS) onProviderEvent(provider, event, record);
}
