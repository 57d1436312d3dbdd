import type { ColumnType, Generated } from 'kysely';
import { columns, type CreatedAt, type UpdatedAt } from './column-types.js';
import type { Environment, SubjectType } from './schema.js';

/** Table types of the authorization server's tables: the provider's models, clients, authorizations and signing keys. */

export interface OidcModelsTable {
  environment: Environment;
  model: string;
  id: string;
  payload: ColumnType<Record<string, unknown>, string, string>;
  grant_id: string | null;
  uid: string | null;
  expires_at: Date | null;
  consumed_at: Date | null;
}

export interface OidcRefreshSuccessorsTable {
  environment: Environment;
  id: string;
  ciphertext: string;
  expires_at: Date;
}

export interface OauthClientsTable {
  environment: Environment;
  client_id: string;
  /** argon2id hash of a standard client's secret; null for a fapi2 client (it authenticates with its keys). */
  client_secret_hash: string | null;
  name: string;
  logo_uri: string | null;
  redirect_uris: string[];
  /** Where the browser may return after RP-Initiated Logout (clients file field post_logout_redirect_uris). */
  post_logout_redirect_uris: Generated<string[]>;
  scopes: string[];
  subject_type: SubjectType;
  ip_allow_list: string[];
  /** Approving needs a second factor (clients file field require_mfa). */
  require_mfa: Generated<boolean>;
  /** standard or fapi2 (docs/bank-data.md, "Profiles"). */
  profile: Generated<ClientProfile>;
  /** A fapi2 client's public keys (a JWK Set), when registered inline. */
  jwks: ColumnType<{ keys: Record<string, unknown>[] } | null, string | null | undefined, string | null>;
  /** Where a fapi2 client publishes its public keys (https), when not inline. */
  jwks_uri: string | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type ClientProfile = 'standard' | 'fapi2';

/** A revision of the client registry: which clients file content became oauth_clients, when, from where. */
export interface OauthClientsRevisionsTable {
  revision: number;
  content_hash: string;
  clients: number;
  applied_at: CreatedAt;
  applied_by: string;
}

export interface OauthAuthorizationsTable {
  grant_id: string;
  environment: Environment;
  client_id: string;
  subject_type: SubjectType;
  user_id: string;
  organization_id: string;
  scopes: string[];
  created_at: CreatedAt;
  expires_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
  revoked_reason: string | null;
}

/** The browser that opened a pushed request first (migration 20261129100000_pushed_request_browsers.sql). */
export interface PushedRequestBrowsersTable {
  environment: Environment;
  request_id: string;
  browser: string;
  expires_at: Date;
}

export type KeyState = 'next' | 'current' | 'previous';

export interface SigningKeysTable {
  environment: Environment;
  kid: string;
  alg: 'ES256' | 'RS256';
  state: KeyState;
  private_jwk: ColumnType<Record<string, unknown>, string, string>;
  created_at: CreatedAt;
  activated_at: Date | null;
  retire_after: Date | null;
}

export interface OauthDatabase {
  oidc_models: OidcModelsTable;
  oidc_refresh_successors: OidcRefreshSuccessorsTable;
  pushed_request_browsers: PushedRequestBrowsersTable;
  oauth_clients: OauthClientsTable;
  oauth_clients_revisions: OauthClientsRevisionsTable;
  oauth_authorizations: OauthAuthorizationsTable;
  signing_keys: SigningKeysTable;
}

/** Column lists of these tables, tied to the interfaces above at compile time. */
export const OAUTH_TABLE_COLUMNS = {
  oidc_models: columns<OidcModelsTable>()(['environment', 'model', 'id', 'payload', 'grant_id', 'uid', 'expires_at', 'consumed_at']),
  oidc_refresh_successors: columns<OidcRefreshSuccessorsTable>()(['environment', 'id', 'ciphertext', 'expires_at']),
  pushed_request_browsers: columns<PushedRequestBrowsersTable>()(['environment', 'request_id', 'browser', 'expires_at']),
  oauth_clients: columns<OauthClientsTable>()([
    'environment',
    'client_id',
    'client_secret_hash',
    'name',
    'logo_uri',
    'redirect_uris',
    'post_logout_redirect_uris',
    'scopes',
    'subject_type',
    'ip_allow_list',
    'require_mfa',
    'profile',
    'jwks',
    'jwks_uri',
    'created_at',
    'updated_at',
  ]),
  oauth_clients_revisions: columns<OauthClientsRevisionsTable>()(['revision', 'content_hash', 'clients', 'applied_at', 'applied_by']),
  oauth_authorizations: columns<OauthAuthorizationsTable>()([
    'grant_id',
    'environment',
    'client_id',
    'subject_type',
    'user_id',
    'organization_id',
    'scopes',
    'created_at',
    'expires_at',
    'last_used_at',
    'revoked_at',
    'revoked_reason',
  ]),
  signing_keys: columns<SigningKeysTable>()([
    'environment',
    'kid',
    'alg',
    'state',
    'private_jwk',
    'created_at',
    'activated_at',
    'retire_after',
  ]),
};
