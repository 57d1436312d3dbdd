import type { Middleware } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { API_ROUTES } from '../routes.js';
import { SCOPES } from '../../accounts/scopes.js';
import { oidcState } from '../request-scope.js';

/**
 * Members of the OpenID document that describe OpenID Connect only (ID Tokens, UserInfo,
 * claims, session iframes, front- and back-channel logout), left out of the RFC 8414 document.
 * Everything else is OAuth 2.0 metadata (RFC 8414 section 2, RFC 7009, RFC 7662, RFC 7636,
 * RFC 9207, and the JAR members `request_parameter_supported` /
 * `request_uri_parameter_supported`, which a JAR-aware OAuth client reads too and whose
 * absence would mean "request_uri is supported"). `end_session_endpoint` stays: RP-Initiated
 * Logout 1.0 registers it in the OAuth Authorization Server Metadata registry too, and clients
 * that read only RFC 8414 metadata find their sign-out there.
 */
const OPENID_ONLY = [
  'userinfo_endpoint',
  'claims_supported',
  'claim_types_supported',
  'claims_parameter_supported',
  'claims_locales_supported',
  'subject_types_supported',
  'acr_values_supported',
  'display_values_supported',
  'check_session_iframe',
  'require_request_uri_registration',
];
const OPENID_ONLY_PREFIXES = ['id_token_', 'userinfo_', 'frontchannel_logout_', 'backchannel_logout_'];

export function isOpenIdOnly(member: string): boolean {
  return OPENID_ONLY.includes(member) || OPENID_ONLY_PREFIXES.some((prefix) => member.startsWith(prefix));
}

/** The browser-facing endpoints, which live on the dashboard host (routes.ts). */
export interface DashboardEndpoints {
  authorization: string;
  endSession: string;
}

/**
 * Discovery advertises exactly what is supported (each member is probed by
 * test/oidc/discovery.test.ts). The provider builds endpoint URLs from the request's host,
 * so the authorization and end-session endpoints (served on the dashboard host) are corrected
 * here.
 *
 * `/.well-known/oauth-authorization-server` (RFC 8414) is answered by the same provider
 * route, so it has the same issuer, endpoints and headers (CORS, caching), minus the
 * OpenID-only members.
 */
export function discoveryDocument(endpoints: DashboardEndpoints): Middleware {
  return async (rawCtx, next) => {
    const oauthMetadata = rawCtx.path === API_ROUTES.oauthMetadata;
    if (oauthMetadata) {
      oidcState(rawCtx).oauthMetadata = true;
      rawCtx.path = API_ROUTES.discovery;
    }
    await next();
    const ctx = rawCtx as unknown as KoaContextWithOIDC;
    if (ctx.oidc?.route !== 'discovery' || ctx.status !== 200) return;
    const body = ctx.body as Record<string, unknown>;
    body.authorization_endpoint = endpoints.authorization;
    body.end_session_endpoint = endpoints.endSession;
    body.response_types_supported = ['code'];
    body.response_modes_supported = ['query'];
    // client_credentials for fapi2 clients only (docs/bank-data.md, "Consent API").
    body.grant_types_supported = ['authorization_code', 'refresh_token', 'client_credentials'];
    body.code_challenge_methods_supported = ['S256'];
    // client_secret_basic for standard clients, private_key_jwt for fapi2 clients (docs/bank-data.md,
    // "Profiles"): each client may use only the one its registration names.
    body.token_endpoint_auth_methods_supported = ['client_secret_basic', 'private_key_jwt'];
    body.revocation_endpoint_auth_methods_supported = ['client_secret_basic', 'private_key_jwt'];
    body.introspection_endpoint_auth_methods_supported = ['client_secret_basic', 'private_key_jwt'];
    body.scopes_supported = [...SCOPES];
    body.subject_types_supported = ['public'];
    // Standard clients get RS256 ID Tokens, fapi2 clients ES256 (client-metadata.ts).
    body.id_token_signing_alg_values_supported = ['RS256', 'ES256'];
    // RFC 9396: FDX consent requests of fapi2 clients (fdx-authorization-details.ts).
    body.authorization_details_types_supported = ['fdx_v1.0'];
    body.claims_supported = ['sub', 'email', 'email_verified', 'name', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce'];
    body.authorization_response_iss_parameter_supported = true;
    // Stated, not omitted: OpenID Discovery 3 reads an absent request_uri_parameter_supported
    // as true, and the provider refuses request_uri (and request, and claims).
    body.request_uri_parameter_supported = false;
    body.request_parameter_supported = false;
    body.claims_parameter_supported = false;
    delete body.require_request_uri_registration;
    if (ctx.state.oidc?.oauthMetadata) {
      for (const member of Object.keys(body)) if (isOpenIdOnly(member)) delete body[member];
    }
  };
}
