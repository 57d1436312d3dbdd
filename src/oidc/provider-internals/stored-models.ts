import type Provider from 'oidc-provider';
import type { Interaction } from 'oidc-provider';

/**
 * A code or refresh token by its value, expired or not: `find(value, { ignoreExpiration: true })`
 * is an option of lib/models/base_model.js the library uses itself (grant_source.js,
 * refresh_token.js) and does not document. We use it to explain an expiry (grant-refusals.ts)
 * and to look at a presented token before the provider does (middleware/refresh-scope.ts,
 * token-request.ts). Tripwire: test/oidc/provider-internals.test.ts ("find with
 * ignoreExpiration: the models still take the option").
 */
export function findRefreshTokenEvenExpired(provider: Provider, value: string) {
  return provider.RefreshToken.find(value, { ignoreExpiration: true });
}

export function findAuthorizationCodeEvenExpired(provider: Provider, value: string) {
  return provider.AuthorizationCode.find(value, { ignoreExpiration: true });
}

/**
 * The pushed request (its id) an interaction was started from, taken off it: the library keeps
 * it as Interaction#parJti (lib/actions/authorization/interactions.js) and its authorization
 * response consumes that PushedAuthorizationRequest when it is set
 * (lib/actions/authorization/respond.js); our consent step uses it up itself
 * (interactions/consent-page.ts), so it is cleared before the resume. Tripwire:
 * test/oidc/provider-internals.test.ts ("Interaction#parJti: the library stores it and respond.js consumes it").
 */
export function takeParJti(interaction: Interaction): string | undefined {
  const library = interaction as Interaction & { parJti?: string };
  const id = library.parJti;
  library.parJti = undefined;
  return id;
}
