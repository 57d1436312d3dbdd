import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import { FDX_SCOPES } from '../accounts/scopes.js';
import { setRequestedScope } from './provider-internals.js';

/**
 * The authorization request's scope check, run by the library as the validator of our
 * x_requested_scope parameter (configuration.ts, extraParams), which our authorization
 * pre-middleware copies from the raw request (middleware/authorization-request.ts).
 */

/**
 * Every requested scope must be one the client registered (unknown ones included, which the
 * library would otherwise drop silently), and an authorization holds at most one FDX scope.
 */
export function validateRequestedScopes(
  ctx: KoaContextWithOIDC,
  value: string | undefined,
  client: { scope?: string; grantTypeAllowed?: (type: string) => boolean },
) {
  const requested = (value ?? '').split(' ').filter(Boolean);
  const registered = new Set((client?.scope ?? '').split(' '));
  const outside = requested.filter((s) => !registered.has(s));
  if (outside.length > 0) throw new errors.InvalidScope('requested scope is not allowed', outside.join(' '));
  if (FDX_SCOPES.every((s) => requested.includes(s))) {
    throw new errors.InvalidScope('read:bank_accounts and sync:connected_accounts cannot be requested together', FDX_SCOPES.join(' '));
  }
  if (requested.includes('offline_access') && client.grantTypeAllowed?.('refresh_token')) keepOfflineAccess(ctx);
}

/**
 * The library drops a requested offline_access unless prompt=consent was asked for. Our
 * consent screen always lists it (OpenID Connect Core 11), and a covering authorization is
 * reused only when it already holds it (existing-grant.ts), so it is put back: the consent,
 * the Grant, the code and the token response's scope then carry it like any other scope.
 * This runs as the last authorization check (extraParams), before the interaction is saved.
 */
function keepOfflineAccess(ctx: KoaContextWithOIDC): void {
  const scopes = String(ctx.oidc.params?.scope ?? '')
    .split(' ')
    .filter(Boolean);
  if (!scopes.includes('offline_access')) setRequestedScope(ctx, [...scopes, 'offline_access'].join(' '));
}
