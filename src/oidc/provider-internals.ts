import crypto from 'node:crypto';
import { decodeProtectedHeader, type JWK } from 'jose';
import { jwkThumbprint } from '../authorizations/fapi-profile.js';
import type Provider from 'oidc-provider';
import type { Db } from '../db/database.js';
import { claimMark } from '../limits/replay-marks-repository.js';
import { isFapi2Client } from './client-metadata.js';
import { callerOfLibraryCall } from './unit-of-work.js';
import type { Environment } from '../db/schema.js';
import { verifiedInThisRequest } from './verified-client-secret.js';
import { redirectUriMatches } from './clients/redirect-uris.js';

/**
 * The seam to oidc-provider: every reliance on what the library does not document lives here
 * or in a part of src/oidc/provider-internals/ re-exported at the end of this file, each with a
 * tripwire in test/oidc/provider-internals.test.ts (docs/layout.md, "The seam to oidc-provider").
 * The stored payload fields our SQL reads are declared in src/db/provider-payload.ts.
 *
 * First, the places where we replace a method of oidc-provider's models instead of
 * configuring it: the library has no setting for these rules. All are written against the
 * library's own Client class (lib/models/client.js) of the version below; a change there (a
 * renamed method, another call site, another `this`) silently bypasses or breaks them, so the
 * version is pinned and test/oidc/provider-internals.test.ts fails when the installed one is
 * outside OIDC_PROVIDER_RANGE or when an override is no longer the one the provider runs.
 */

/** The oidc-provider versions these overrides were checked against (package.json pins "~9.13.3"). */
export const OIDC_PROVIDER_RANGE = { from: '9.13.3', below: '9.14.0' } as const;

/**
 * Client#redirectUriAllowed (oidc-provider 9.13.x: an exact string match against redirect_uris,
 * called by the authorization endpoint and its error handler). Redirect URIs match as docs/oauth.md
 * ("OAuth 2.0 and OpenID Connect", Redirect URIs) says: scheme and host case-insensitive, :443
 * equal to no port, path exact, never a pattern. Breaks without it:
 * test/oidc/authorization-request.test.ts ("match a redirect_uri with an upper-case scheme and
 * host" / "an explicit :443").
 */
export function overrideRedirectUriAllowed(provider: Provider, environment: Environment): void {
  provider.Client.prototype.redirectUriAllowed = function redirectUriAllowed(this: { redirectUris: string[] }, value: string) {
    return redirectUriMatches(value, this.redirectUris, environment);
  };
}

/**
 * Client#postLogoutRedirectUriAllowed (oidc-provider 9.13.x: an exact string match against
 * post_logout_redirect_uris, called by the end-session endpoint). A post-logout redirect URI
 * is held to the redirect URIs' rules and matched the same way (docs/oauth.md, "Signing out
 * from an application"). Breaks without it: test/browser/logout.test.ts ("a return address is
 * matched as redirect URIs are").
 */
export function overridePostLogoutRedirectUriAllowed(provider: Provider, environment: Environment): void {
  provider.Client.prototype.postLogoutRedirectUriAllowed = function postLogoutRedirectUriAllowed(
    this: { postLogoutRedirectUris?: string[] },
    value: string,
  ) {
    return redirectUriMatches(value, this.postLogoutRedirectUris ?? [], environment);
  };
}

/**
 * Client#compareClientSecret (oidc-provider 9.13.x: a constant-time comparison with the
 * stored client_secret, awaited by client authentication in lib/shared/client_auth.js).
 * client_secret holds an argon2id hash, which cannot be checked synchronously; the library
 * awaits this call today, but a Promise used without await is truthy and would let any secret
 * pass. So the secret is verified before the provider runs (middleware/client-secret-check.ts:
 * argon2 through the cache, its failure limits, the retry after a rotation elsewhere) and this
 * is a plain synchronous lookup of that outcome: true only when this request verified exactly
 * this secret for this client, false for anything else (no request, nothing verified, another
 * client, another secret), however it is called (docs/oauth.md, "OAuth 2.0 and OpenID
 * Connect", Client authentication). Breaks without it: every client authentication, e.g.
 * test/oidc/client-registry.test.ts ("after rotate-secret the old secret is refused at once and
 * the new one works"); test/security/client-secret-fail-closed.test.ts holds the rule.
 */
export function overrideCompareClientSecret(provider: Provider): void {
  provider.Client.prototype.compareClientSecret = function compareClientSecret(this: { clientId: string }, presented: string): boolean {
    return verifiedInThisRequest(this.clientId, presented);
  };
}

/**
 * ReplayDetection.unique (oidc-provider 9.13.x: a find then a save, called for a client
 * assertion's jti in lib/shared/jwt_client_auth.js and a DPoP proof's jti in
 * lib/helpers/validate_dpop.js). A find then a save lets two processes both accept one value;
 * here it is one insert in replay_marks (docs/bank-data.md, "Replays"), written at once, outside
 * the request's unit of work. Breaks without it: test/security/fapi2-authorization-server.test.ts
 * ("a client assertion is accepted once across two processes").
 */
export function overrideReplayDetection(provider: Provider, db: Db, environment: Environment): void {
  (provider.ReplayDetection as unknown as { unique: (iss: string, jti: string, exp: number) => Promise<boolean> }).unique = async (
    iss,
    jti,
    exp,
  ) => {
    const key = crypto.createHash('sha256').update(`${iss}\0${jti}`).digest('base64url');
    return claimMark(db, environment, 'provider', key, new Date(exp * 1000));
  };
}

/**
 * RefreshToken#save (oidc-provider 9.13.x: the library binds a refresh token to the DPoP key
 * only for public clients, lib/helpers/set_rt_bindings.js). A fapi2 client's refresh token is
 * bound to the key of the DPoP proof it was issued with (docs/bank-data.md, "Tokens"); the
 * refresh grant then refuses a proof made with any other key (lib/actions/grants/refresh_token.js
 * checks `jkt` for every client). The proof was verified earlier in the same request. Breaks
 * without it: test/security/fapi2-authorization-server.test.ts ("a refresh token works only with
 * the key it was issued to, and is not rotated").
 */
export function overrideRefreshTokenBinding(provider: Provider): void {
  type Saving = { jkt?: string; client?: unknown };
  const RefreshToken = provider.RefreshToken as unknown as { prototype: { save: (this: Saving, ...args: unknown[]) => Promise<string> } };
  const save = RefreshToken.prototype.save;
  RefreshToken.prototype.save = async function bindingSave(this: Saving, ...args: unknown[]) {
    // The token knows its client (lib/models/base_token.js); the request's unit of work carries the proof.
    if (!this.jkt && isFapi2Client(this.client)) {
      const proof = callerOfLibraryCall()?.dpopProof;
      if (proof) this.jkt = await jwkThumbprint(decodeProtectedHeader(proof).jwk as JWK);
    }
    return save.apply(this, args);
  };
}

// The other reach-ins, one module each (docs/layout.md, "The seam to oidc-provider"); code
// outside src/oidc/provider-internals* imports them from here only.
export { replayRequestBody } from './provider-internals/request-body.js';
export { basicCredentials, VISIBLE_CREDENTIAL } from './provider-internals/client-credentials.js';
export {
  APP_ERROR_EVENT,
  emitServerError,
  onProviderEvent,
  REFUSAL_EVENTS,
  SERVER_ERROR_EVENT,
  UNUSED_REFUSAL_EVENTS,
} from './provider-internals/events.js';
export { interactionLoginOf, requestEntities, type RequestEntities } from './provider-internals/request-entities.js';
export { loadLogoutSession, logoutSessionOf, logoutXsrf, type LogoutSession } from './provider-internals/logout.js';
export { setRequestedScope } from './provider-internals/params.js';
export {
  asUserinfoProofRefusal,
  DescribedClientAuthRefusal,
  GRANT_ERROR_DETAILS,
  renderedRefusal,
} from './provider-internals/refusal-details.js';
export { providerSessionStore, sessionIdOfRequest, type ProviderSession } from './provider-internals/session-store.js';
export {
  findAuthorizationCodeEvenExpired,
  findRefreshTokenEvenExpired,
  takeParJti,
  unbindInteractionSession,
} from './provider-internals/stored-models.js';
