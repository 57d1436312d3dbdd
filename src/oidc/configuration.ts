import { errors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import type { Environment } from '../db/schema.js';
import { SCOPES } from '../accounts/scopes.js';
import { ACR_ONE_FACTOR, ACR_TWO_FACTORS } from '../accounts/authentication-methods.js';
import type { Keygrip } from './cookie-keys.js';
import { AUTHORIZATION_LIFETIME_SECONDS } from '../authorizations/authorizations.js';
import {
  ACCESS_TOKEN_TTL,
  AUTHORIZATION_CODE_TTL,
  PUSHED_REQUEST_TTL,
  ID_TOKEN_TTL,
  INTERACTION_TTL,
  REFRESH_TOKEN_TTL,
  SESSION_TTL,
} from './lifetimes.js';
import { API_ROUTES, authorizationPath, endSessionPath, INTERACTION_PREFIX } from './routes.js';
import { EXTRA_CLIENT_PROPERTIES, isFapi2Client } from './client-metadata.js';
import { validateRequestedScopes } from './requested-scopes.js';
import { grantedFdxDetail, validateAuthorizationDetails } from './fdx-authorization-details.js';
import { CLOCK_TOLERANCE_SECONDS, FAPI_SIGNING_ALGS } from '../authorizations/fapi-profile.js';
import { checkClientAssertion } from './client-assertions.js';
import type { KeySetFetch } from './key-set-fetch.js';

/**
 * oidc-provider's configuration for one environment: what the providers do (features, flows,
 * algorithms, scopes), for how long (TTLs), where (routes) and with which cookies. The parts
 * that need the database (adapter, findAccount, loadExistingGrant) and the error page are
 * passed in by provider.ts, which builds the provider from this.
 */

const epoch = () => Math.floor(Date.now() / 1000);

/**
 * Refresh tokens live 31 days from now, but never past 365 days from the first issue (iiat),
 * nor past the end of the FDX consent they were issued under (docs/bank-data.md, "Consents").
 */
export function refreshTokenTtl(ctx: unknown, token: { iiat?: number; iat?: number }): number {
  const firstIssue = token.iiat ?? token.iat ?? epoch();
  const consentEnds = grantedFdxDetail((ctx as Partial<KoaContextWithOIDC> | undefined)?.oidc?.entities?.Grant)?.consentEnds ?? Infinity;
  return Math.max(1, Math.min(REFRESH_TOKEN_TTL, firstIssue + AUTHORIZATION_LIFETIME_SECONDS - epoch(), consentEnds - epoch()));
}

/** The provider's cookies (session, interaction, resume): HttpOnly, SameSite=Lax, Secure on https. */
export function providerCookieOptions(dashboardOrigin: string) {
  return { signed: true, httpOnly: true, sameSite: 'lax' as const, secure: dashboardOrigin.startsWith('https:'), overwrite: true };
}

/** What the configuration takes from its environment and from the database-backed parts. */
interface ConfigurationParts {
  environment: Environment;
  dashboardOrigin: string;
  jwks: { keys: Record<string, unknown>[] };
  cookieKeys: Keygrip;
  adapter: Configuration['adapter'];
  findAccount: Configuration['findAccount'];
  loadExistingGrant: Configuration['loadExistingGrant'];
  renderError: Configuration['renderError'];
  /** How the provider fetches what a client names (its jwks_uri): key-set-fetch.ts. */
  fetch: KeySetFetch;
  /** The end-session endpoint's pages (end-session-pages.ts). */
  logoutPages: { logoutSource: RpInitiatedLogout['logoutSource']; postLogoutSuccessSource: RpInitiatedLogout['postLogoutSuccessSource'] };
}

type RpInitiatedLogout = NonNullable<NonNullable<Configuration['features']>['rpInitiatedLogout']>;

export function providerConfiguration(parts: ConfigurationParts): Configuration {
  const { environment } = parts;
  const cookie = providerCookieOptions(parts.dashboardOrigin);
  return {
    adapter: parts.adapter,
    clients: [],
    findAccount: parts.findAccount,
    jwks: parts.jwks as Configuration['jwks'],
    cookies: {
      names: { session: `alm_${environment}_session`, interaction: `alm_${environment}_interaction`, resume: `alm_${environment}_resume` },
      // The library accepts a keygrip in place of an array (it hands it to `cookies` as is).
      keys: parts.cookieKeys as unknown as string[],
      long: cookie,
      short: cookie,
    },
    routes: {
      authorization: authorizationPath(environment),
      end_session: endSessionPath(environment),
      token: API_ROUTES.token,
      userinfo: API_ROUTES.userinfo,
      revocation: API_ROUTES.revocation,
      introspection: API_ROUTES.introspection,
      pushed_authorization_request: API_ROUTES.pushedAuthorization,
      jwks: API_ROUTES.jwks,
    },
    interactions: { url: (_ctx, interaction) => `${INTERACTION_PREFIX}/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      // FAPI 2.0 Security Profile per client, never globally (docs/bank-data.md, "Profiles"):
      // fapi2 clients get it; standard clients keep every rule of docs/oauth.md.
      fapi: { enabled: true, profile: (_ctx: unknown, client: unknown) => (isFapi2Client(client) ? '2.0' : undefined) } as never,
      // DPoP (RFC 9449): required of fapi2 clients by their registration (dpop_bound_access_tokens);
      // proofs' jti are single-use across processes (provider-internals.ts, overrideReplayDetection).
      dPoP: { enabled: true, allowReplay: false },
      // PAR (RFC 9126): required of fapi2 clients by their registration; a request_uri lives 60 s.
      pushedAuthorizationRequests: { enabled: true, requirePushedAuthorizationRequests: false, allowUnregisteredRedirectUris: false },
      resourceIndicators: { enabled: false },
      // RP-Initiated Logout 1.0 (docs/oauth.md, "Signing out from an application"): GET only
      // (enableHttpPostMethods stays false), with our pages.
      rpInitiatedLogout: { enabled: true, ...parts.logoutPages },
      // A fapi2 client's own token, for the FDX Consent API only (docs/bank-data.md, "Consent API"):
      // its registration alone allows the grant, and the token carries no scope.
      clientCredentials: { enabled: true },
      claimsParameter: { enabled: false },
      registration: { enabled: false },
      userinfo: { enabled: true },
      // A client may revoke only its own tokens; another client's token is ignored (200, RFC 7009).
      revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
      introspection: {
        enabled: true,
        // A client learns about its own tokens only.
        allowedPolicy: async (ctx, client, token) => token.clientId === client.clientId,
      },
    },
    responseTypes: ['code'],
    pkce: { required: () => true },
    // private_key_jwt is registered by fapi2 clients only; each client may use only its own method.
    clientAuthMethods: ['client_secret_basic', 'private_key_jwt'],
    // A client assertion is made just now and lives at most 5 minutes (client-assertions.ts).
    assertJwtClientAuthClaimsAndHeader: checkClientAssertion,
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'RS256',
    },
    enabledJWA: {
      // What FAPI 2.0 allows for client assertions and DPoP proofs (§5.4: PS256, ES256, EdDSA).
      clientAuthSigningAlgValues: [...FAPI_SIGNING_ALGS],
      dPoPSigningAlgValues: [...FAPI_SIGNING_ALGS],
      idTokenSigningAlgValues: ['RS256', 'ES256'],
      userinfoSigningAlgValues: ['RS256', 'ES256'],
      introspectionSigningAlgValues: ['RS256', 'ES256'],
      authorizationSigningAlgValues: ['RS256', 'ES256'],
    },
    scopes: [...SCOPES],
    // acr and amr come from the browser session (how the user signed in: docs/oauth.md,
    // "Second factors and step-up"); acr_values is honoured by the consent step (step-up).
    acrValues: [ACR_ONE_FACTOR, ACR_TWO_FACTORS],
    claims: { openid: ['sub', 'email', 'email_verified', 'name', 'acr', 'amr', 'auth_time'] },
    subjectTypes: ['public'],
    ttl: {
      AuthorizationCode: AUTHORIZATION_CODE_TTL,
      PushedAuthorizationRequest: PUSHED_REQUEST_TTL,
      AccessToken: ACCESS_TOKEN_TTL,
      IdToken: ID_TOKEN_TTL,
      Interaction: INTERACTION_TTL,
      Session: SESSION_TTL,
      Grant: AUTHORIZATION_LIFETIME_SECONDS,
      RefreshToken: refreshTokenTtl as never,
    },
    // fapi2 clients keep one refresh token, bound to their DPoP key (FAPI 2.0 §5.3.2.1 item 9);
    // standard clients get a new one with every use.
    rotateRefreshToken: (ctx) => !isFapi2Client(ctx.oidc.client),
    // Every code grant gets a refresh token (offline_access is consented to and echoed in the
    // scope, but issuance does not depend on it), and tokens outlive the browser session that
    // approved them.
    // A ONE_TIME FDX consent gets none (docs/bank-data.md, "Consents").
    issueRefreshToken: async (ctx, client) =>
      client.grantTypeAllowed('refresh_token') && grantedFdxDetail(ctx.oidc.entities.Grant)?.consentRequest.durationType !== 'ONE_TIME',
    expiresWithSession: async () => false,
    // Signing out never ends an authorization (docs/oauth.md, "Sign-in"): the library's
    // end-session confirm revokes a session's grant that issued no code yet, which would
    // otherwise destroy the Grant under a live authorization row.
    revokeGrantPolicy: (ctx) => ctx.oidc.route !== 'end_session_confirm',
    // A new authorization (Grant) per consent, with its own 365-day clock, unless a live
    // authorization already covers the request (existing-grant.ts).
    loadExistingGrant: parts.loadExistingGrant,
    allowOmittingSingleRegisteredRedirectUri: false,
    extraParams: {
      // Set by our authorization pre-middleware from the raw request (see authorization-request.ts).
      x_requested_scope: validateRequestedScopes,
      x_nonce: null,
      // RFC 9396, for FDX consent requests of fapi2 clients (fdx-authorization-details.ts).
      authorization_details: validateAuthorizationDetails,
      // Required of standard clients; optional under FAPI 2.0 (PKCE binds the response).
      nonce: (ctx: KoaContextWithOIDC, value: string | undefined) => {
        if (!value && !ctx.oidc.params?.x_nonce && !isFapi2Client(ctx.oidc.client))
          throw new errors.InvalidRequest("missing required parameter 'nonce'");
      },
    } as unknown as Configuration['extraParams'],
    extraClientMetadata: {
      properties: EXTRA_CLIENT_PROPERTIES,
    },
    renderError: parts.renderError,
    // A client's jwks_uri is fetched under the webhook address rules, with a deadline, and a
    // failed address is left alone for a minute (key-set-fetch.ts); nothing else is fetched.
    fetch: (input, init) => parts.fetch(input instanceof Request ? input.url : input, init),
    conformIdTokenClaims: true,
    // FAPI 2.0 §5.3.2.1: 10 seconds for the JWTs a client sends (assertions, DPoP proofs).
    clockTolerance: CLOCK_TOLERANCE_SECONDS,
  };
}
