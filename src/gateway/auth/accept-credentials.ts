import type { Middleware } from 'koa';
import type { RouteSpec } from '../routing/route-spec.js';
import { unauthorized } from '../routing/problems.js';
import { ORGANIZATION_CREDENTIALS } from './require-caller-kind.js';
import type { CredentialKind } from './state.js';

/**
 * The bearer credentials an operation accepts, from its spec: what the router enforces
 * (acceptAccessTokensOnly, requireCallerKind) and what /openapi.json declares as its
 * security, so the two cannot disagree.
 */
export function acceptedCredentials(spec: Pick<RouteSpec, 'credentials' | 'callers'>): readonly CredentialKind[] {
  if (spec.credentials === 'client') return ['client_credentials'];
  const kinds: readonly CredentialKind[] = spec.credentials === 'access_token' ? ['access_token'] : ['access_token', 'api_key'];
  // Every operation is called for an organization: what names kinds takes only an organization's credentials.
  return spec.callers ? kinds.filter((k) => ORGANIZATION_CREDENTIALS.includes(k)) : kinds;
}

/** Some APIs take access tokens only (the FDX API): an API key there is a 401. */
export function acceptAccessTokensOnly(): Middleware {
  return async (ctx, next) => {
    if (ctx.state.credential?.kind !== 'access_token') throw unauthorized('This API accepts OAuth access tokens only, not API keys.', true);
    await next();
  };
}
