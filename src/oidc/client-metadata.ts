import type { Environment } from '../db/schema.js';
import type { ClientRow } from './clients/repository.js';

/**
 * How a registered client (a row of oauth_clients) is presented to oidc-provider: the
 * library's client metadata, with the choices of its profile (docs/bank-data.md, "Profiles")
 * and our extra members (subject type, IP allow-list, environment, profile).
 * - standard: code flow, client_secret_basic, RS256 ID Tokens, Bearer access tokens.
 * - fapi2 (FAPI 2.0 Security Profile): private_key_jwt with its registered keys, pushed
 *   authorization requests required, DPoP-bound access tokens, ES256 ID Tokens.
 */
export function toClientMetadata(row: ClientRow, environment: Environment) {
  const common = {
    client_id: row.client_id,
    client_name: row.name,
    ...(row.logo_uri ? { logo_uri: row.logo_uri } : {}),
    redirect_uris: row.redirect_uris,
    post_logout_redirect_uris: row.post_logout_redirect_uris,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    scope: row.scopes.join(' '),
    authorization_subject: row.subject_type,
    ip_allow_list: row.ip_allow_list,
    require_mfa: row.require_mfa,
    almoner_environment: environment,
    almoner_profile: row.profile,
  };
  if (row.profile === 'fapi2') {
    return {
      ...common,
      ...(row.jwks ? { jwks: row.jwks } : { jwks_uri: row.jwks_uri ?? undefined }),
      // client_credentials: its own DPoP-bound token for the FDX Consent API.
      grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
      token_endpoint_auth_method: 'private_key_jwt',
      id_token_signed_response_alg: 'ES256',
      require_pushed_authorization_requests: true,
      dpop_bound_access_tokens: true,
    };
  }
  return {
    ...common,
    client_secret: row.client_secret_hash ?? undefined,
    token_endpoint_auth_method: 'client_secret_basic',
    id_token_signed_response_alg: 'RS256',
  };
}

export type ClientMetadata = ReturnType<typeof toClientMetadata>;

/** The extra members above, declared to the library so it keeps them. */
export const EXTRA_CLIENT_PROPERTIES = ['authorization_subject', 'ip_allow_list', 'require_mfa', 'almoner_environment', 'almoner_profile'];

/** Whether a client (the library's Client, or its metadata) is registered with the fapi2 profile. */
export function isFapi2Client(client: unknown): boolean {
  return (client as { almoner_profile?: unknown } | undefined)?.almoner_profile === 'fapi2';
}
