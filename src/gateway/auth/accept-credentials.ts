import type { Middleware } from 'koa';
import type { RouteSpec } from '../routing/route-spec.js';
import { unauthorized } from '../routing/problems.js';
import { FUND_PROVIDER_CREDENTIALS } from './require-fund-provider.js';
import type { CredentialKind } from './state.js';

/**
 * The bearer credentials an operation accepts, from its spec: what the router enforces
 * (acceptAccessTokensOnly, requireFundProvider) and what /openapi.json declares as its
 * security, so the two cannot disagree.
 */
export function acceptedCredentials(spec: Pick<RouteSpec, 'credentials' | 'callers'>): readonly CredentialKind[] {
  if (spec.credentials === 'client') return ['client_credentials'];
  const kinds: readonly CredentialKind[] = spec.credentials === 'access_token' ? ['access_token'] : ['access_token', 'api_key'];
  return spec.callers === 'fund_provider' ? kinds.filter((k) => FUND_PROVIDER_CREDENTIALS.includes(k)) : kinds;
}

/** Some APIs take access tokens only (the FDX API): an API key there is a 401. */
export function acceptAccessTokensOnly(): Middleware {
  return async (ctx, next) => {
    if (ctx.state.credential?.kind !== 'access_token') throw unauthorized('This API accepts OAuth access tokens only, not API keys.', true);
    await next();
  };
}
