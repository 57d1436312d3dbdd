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
 * (interactions/consent-page.ts, through db/provider-store.ts's conditional consume of its row), so
 * it is cleared before the resume. A PushedAuthorizationRequest row counts as unused while its
 * consumed_at is empty (pushed-request-browsers-repository.ts), since the library consumes it,
 * never deletes it, when it is used. Tripwire:
 * test/oidc/provider-internals.test.ts ("Interaction#parJti: the library stores it and respond.js consumes it").
 */
export function takeParJti(interaction: Interaction): string | undefined {
  const library = interaction as Interaction & { parJti?: string };
  const id = library.parJti;
  library.parJti = undefined;
  return id;
}

/**
 * Unbinds an interaction from the browser session it was started in (interactions/provider-session.ts,
 * detachFromSession: another user signs in during it). The library's resume compares the
 * interaction's `session.uid` with the request's session and refuses a mismatch
 * (lib/actions/authorization/resume.js); an interaction without one is resumed into a fresh
 * session. The mutation is not one the library invites. Tripwire:
 * test/oidc/provider-internals.test.ts ("Interaction#session: the resume compares only a session
 * uid the interaction still holds"); behaviour: test/interactions/hosted-pages.test.ts ("signs a
 * different user in when prompt=login is answered by someone else, ending the old session").
 */
export async function unbindInteractionSession(interaction: {
  session?: { uid?: string };
  exp: number;
  save(ttl: number): Promise<string>;
}): Promise<void> {
  interaction.session = undefined;
  await interaction.save(Math.max(1, interaction.exp - Math.floor(Date.now() / 1000)));
}
