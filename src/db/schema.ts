import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/** Table types of the migrated schema; test/db/schema.test.ts checks them against the database. */

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type UpdatedAt = ColumnType<Date, Date | string | undefined, Date | string>;

export type OrganizationKind = 'nonprofit' | 'fund_provider';
export type Role = 'owner' | 'admin' | 'member' | 'read_only';
export type Environment = 'production' | 'sandbox';

export interface OrganizationsTable {
  id: Generated<string>;
  kind: OrganizationKind;
  ein: string;
  name: string;
  address_line1: string | null;
  address_line2: string | null;
  city: string | null;
  region: string | null;
  postal_code: string | null;
  country: Generated<string>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface UsersTable {
  id: Generated<string>;
  email: string;
  password_hash: string;
  display_name: string | null;
  disabled_at: Date | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface MembershipsTable {
  organization_id: string;
  user_id: string;
  role: Role;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface AuditEventsTable {
  id: ColumnType<string, never, never>;
  occurred_at: CreatedAt;
  event: string;
  environment: Environment | null;
  actor_user_id: string | null;
  organization_id: string | null;
  client_id: string | null;
  ip: string | null;
  request_id: string | null;
  details: ColumnType<Record<string, unknown>, string | undefined, string>;
}

export interface DemoSeedStepsTable {
  name: string;
  applied_at: CreatedAt;
}

export type SubjectType = 'user' | 'organization';

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
  client_secret_hash: string;
  name: string;
  logo_uri: string | null;
  redirect_uris: string[];
  scopes: string[];
  subject_type: SubjectType;
  ip_allow_list: string[];
  created_at: CreatedAt;
  updated_at: UpdatedAt;
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

export interface ServerSecretsTable {
  name: string;
  value: string;
  created_at: CreatedAt;
}

export interface Database {
  organizations: OrganizationsTable;
  users: UsersTable;
  memberships: MembershipsTable;
  audit_events: AuditEventsTable;
  demo_seed_steps: DemoSeedStepsTable;
  oidc_models: OidcModelsTable;
  oidc_refresh_successors: OidcRefreshSuccessorsTable;
  oauth_clients: OauthClientsTable;
  oauth_authorizations: OauthAuthorizationsTable;
  signing_keys: SigningKeysTable;
  server_secrets: ServerSecretsTable;
}

/** Column lists of every table, tied to the interfaces above at compile time. */
type Columns<T> = readonly (keyof T & string)[];
type Exhaustive<T, L extends readonly unknown[]> = Exclude<keyof T, L[number]> extends never ? L : never;
const columns = <T>() => <const L extends Columns<T>>(list: Exhaustive<T, L>) => list;

export const TABLE_COLUMNS = {
  organizations: columns<OrganizationsTable>()(['id', 'kind', 'ein', 'name', 'address_line1', 'address_line2', 'city', 'region', 'postal_code', 'country', 'created_at', 'updated_at']),
  users: columns<UsersTable>()(['id', 'email', 'password_hash', 'display_name', 'disabled_at', 'created_at', 'updated_at']),
  memberships: columns<MembershipsTable>()(['organization_id', 'user_id', 'role', 'created_at', 'updated_at']),
  audit_events: columns<AuditEventsTable>()(['id', 'occurred_at', 'event', 'environment', 'actor_user_id', 'organization_id', 'client_id', 'ip', 'request_id', 'details']),
  demo_seed_steps: columns<DemoSeedStepsTable>()(['name', 'applied_at']),
  oidc_models: columns<OidcModelsTable>()(['environment', 'model', 'id', 'payload', 'grant_id', 'uid', 'expires_at', 'consumed_at']),
  oidc_refresh_successors: columns<OidcRefreshSuccessorsTable>()(['environment', 'id', 'ciphertext', 'expires_at']),
  oauth_clients: columns<OauthClientsTable>()(['environment', 'client_id', 'client_secret_hash', 'name', 'logo_uri', 'redirect_uris', 'scopes', 'subject_type', 'ip_allow_list', 'created_at', 'updated_at']),
  oauth_authorizations: columns<OauthAuthorizationsTable>()(['grant_id', 'environment', 'client_id', 'subject_type', 'user_id', 'organization_id', 'scopes', 'created_at', 'expires_at', 'last_used_at', 'revoked_at', 'revoked_reason']),
  signing_keys: columns<SigningKeysTable>()(['environment', 'kid', 'alg', 'state', 'private_jwk', 'created_at', 'activated_at', 'retire_after']),
  server_secrets: columns<ServerSecretsTable>()(['name', 'value', 'created_at']),
} satisfies { [K in keyof Database]: readonly string[] };

export type Organization = Selectable<OrganizationsTable>;
export type NewOrganization = Insertable<OrganizationsTable>;
export type User = Selectable<UsersTable>;
export type Membership = Selectable<MembershipsTable>;
export type MembershipUpdate = Updateable<MembershipsTable>;
