import type { Environment } from '../db/schema.js';
import type { ClientRow } from './clients/repository.js';

/**
 * How a registered client (a row of oauth_clients) is presented to oidc-provider: the
 * library's client metadata, with our fixed choices (code flow, client_secret_basic, RS256 ID
 * Tokens) and our extra members (subject type, IP allow-list, environment).
 */
export function toClientMetadata(row: ClientRow, environment: Environment) {
  return {
    client_id: row.client_id,
    client_secret: row.client_secret_hash,
    client_name: row.name,
    ...(row.logo_uri ? { logo_uri: row.logo_uri } : {}),
    redirect_uris: row.redirect_uris,
    post_logout_redirect_uris: row.post_logout_redirect_uris,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
    id_token_signed_response_alg: 'RS256',
    scope: row.scopes.join(' '),
    authorization_subject: row.subject_type,
    ip_allow_list: row.ip_allow_list,
    require_mfa: row.require_mfa,
    almoner_environment: environment,
  };
}

export type ClientMetadata = ReturnType<typeof toClientMetadata>;

/** The extra members above, declared to the library so it keeps them. */
export const EXTRA_CLIENT_PROPERTIES = ['authorization_subject', 'ip_allow_list', 'require_mfa', 'almoner_environment'];
