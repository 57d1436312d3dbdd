import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';
import { columns, type CreatedAt, type Json, type UpdatedAt } from './column-types.js';
import { DAF_TABLE_COLUMNS, type DafDatabase } from './schema-daf.js';
import { DIRECTORY_TABLE_COLUMNS, type DirectoryDatabase } from './schema-directory.js';
import { EVENT_TABLE_COLUMNS, type EventsDatabase } from './schema-events.js';
import { FDX_TABLE_COLUMNS, type FdxDatabase } from './schema-fdx.js';
import { DONATION_GIFT_COLUMNS, GIFT_TABLE_COLUMNS, type DonationGiftColumns, type GiftDatabase } from './schema-gift.js';
import { GIVING_TABLE_COLUMNS, type GivingDatabase, type GrantAddressJson } from './schema-giving.js';
import { IDEMPOTENCY_TABLE_COLUMNS, type IdempotencyDatabase } from './schema-idempotency.js';
import { IDENTITY_TABLE_COLUMNS, type IdentityDatabase } from './schema-identity.js';
import { GRANTMAKING_TABLE_COLUMNS, type GrantmakingDatabase } from './schema-grantmaking.js';
import { LEDGER_TABLE_COLUMNS, type LedgerDatabase } from './schema-ledger.js';
import { OAUTH_TABLE_COLUMNS, type OauthDatabase } from './schema-oauth.js';

export type {
  ClientProfile,
  KeyState,
  OauthAuthorizationsTable,
  OauthClientsRevisionsTable,
  OauthClientsTable,
  OidcModelsTable,
  OidcRefreshSuccessorsTable,
  SigningKeysTable,
} from './schema-oauth.js';

/** Table types of the migrated schema; test/db/migrations.test.ts checks them against the migrated database. */

export type OrganizationKind = 'nonprofit' | 'fund_provider' | 'grantmaker' | 'platform' | 'lockbox_provider';
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
  /** Every member must use a second factor (docs/accounts.md). */
  require_mfa: Generated<boolean>;
  /** A disbursement's creator may not approve it (docs/grantmaking.md, "Approvals by another person"). */
  require_second_approver: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface UsersTable {
  id: Generated<string>;
  email: string;
  password_hash: string;
  display_name: string | null;
  disabled_at: Date | null;
  password_changed_at: Date | null;
  /** Rises with every credentials change that ends the user's sign-ins (identity/sessions.ts). */
  credentials_epoch: Generated<number>;
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
  /** Rows that count repeated events (refused sign-ins of one lockout window) share it; null otherwise. */
  aggregate_key: string | null;
}

export interface DemoSeedStepsTable {
  name: string;
  applied_at: CreatedAt;
}

export type SubjectType = 'user' | 'organization';

/** Versioned server keys (src/keys/server-keys.ts); values sealed with the secrets key. */
export interface ServerKeysTable {
  name: string;
  kid: string;
  value: string;
  created_at: CreatedAt;
  activates_at: Date;
}

/** The sign-in throttle's rows (src/identity/login-throttle-repository.ts). */
export interface LoginThrottleTable {
  key: string;
  points: number;
  /** Epoch milliseconds (bigint, read as a string). */
  expire: ColumnType<string | null, number | null, number | null>;
}

export interface ApiKeysTable {
  id: string;
  environment: Environment;
  organization_id: string;
  key_hash: string;
  key_prefix: string;
  /** Given when the key is made; keys made before names existed have none. */
  name: string | null;
  created_at: CreatedAt;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** A secret shown once after a form, sealed, under the SHA-256 of its single-use id (keys/one-time-secrets.ts). */
export interface OneTimeSecretsTable {
  id: string;
  purpose: string;
  binding: string;
  sealed: string;
  expires_at: Date;
}

/** A Connect: its creator (organization_id: a platform, or a nonprofit for itself) and the nonprofit it is for. */
export interface ConnectsTable {
  id: string;
  environment: Environment;
  organization_id: string;
  name: string;
  /** The directory organization its grants go to; null for connects from before DAFpay giving (the demo's). */
  recipient_organization_id: string | null;
  contact: ColumnType<Record<string, string> | null, string | null | undefined, string | null>;
  metadata: Json<Record<string, string>>;
  active: Generated<boolean>;
  created_by: string | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type PaymentStatus =
  'INCOMING_TO_CHARIOT' | 'INCOMING_OUTSIDE_CHARIOT' | 'RECEIVED_IN_CHARIOT' | 'RECEIVED_OUTSIDE_CHARIOT' | 'CANCELED';

export interface DonorJson {
  full_name?: string;
  first_name?: string;
  last_name?: string;
  email?: string;
  phone?: string;
  address?: { line1: string; line2?: string; city: string; state: string; postal_code: string; country: string };
}

export interface DonationsTable extends DonationGiftColumns {
  id: string;
  environment: Environment;
  organization_id: string;
  external_id: string;
  payment_source_id: string;
  deposit_id: string | null;
  dafpay_tracking_id: string | null;
  amount_gross: ColumnType<string, number | bigint | string, number | bigint | string>;
  amount_net: ColumnType<string, number | bigint | string, number | bigint | string>;
  amount_fee: ColumnType<string, number | bigint | string, number | bigint | string>;
  currency: Generated<string>;
  purpose: Generated<string>;
  note: Generated<string>;
  primary_donor: ColumnType<DonorJson | null, string | null, string | null>;
  payment_status: PaymentStatus;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  canceled_at: Date | null;
}

export interface GrantsTable {
  id: Generated<string>;
  environment: Environment;
  organization_id: string;
  connect_id: string;
  workflow_session_id: Generated<string>;
  tracking_id: string;
  fund_id: string;
  external_grant_id: string | null;
  amount: ColumnType<string, number | bigint | string, number | bigint | string>;
  status: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  phone: string | null;
  note: string | null;
  payment_channel: Generated<'dafpay_network' | 'direct'>;
  daf_id: string | null;
  donor_account_id: string | null;
  grant_request_id: string | null;
  recurring_grant_id: string | null;
  /** The platform's fee (applicationFeeAmount), in cents. */
  application_fee: ColumnType<string, number | undefined, number>;
  metadata: Json<Record<string, string>>;
  address: ColumnType<GrantAddressJson | null, string | null | undefined, string | null>;
  designation: string | null;
  completed_at: Date | null;
  canceled_at: Date | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface Database
  extends
    DafDatabase,
    DirectoryDatabase,
    EventsDatabase,
    FdxDatabase,
    GiftDatabase,
    GivingDatabase,
    GrantmakingDatabase,
    IdempotencyDatabase,
    IdentityDatabase,
    LedgerDatabase,
    OauthDatabase {
  organizations: OrganizationsTable;
  users: UsersTable;
  memberships: MembershipsTable;
  audit_events: AuditEventsTable;
  demo_seed_steps: DemoSeedStepsTable;
  server_keys: ServerKeysTable;
  login_throttle: LoginThrottleTable;
  api_keys: ApiKeysTable;
  one_time_secrets: OneTimeSecretsTable;
  connects: ConnectsTable;
  donations: DonationsTable;
  grants: GrantsTable;
}

/** Column lists of every table, tied to the interfaces above at compile time. */

export const TABLE_COLUMNS = {
  ...DAF_TABLE_COLUMNS,
  ...DIRECTORY_TABLE_COLUMNS,
  ...EVENT_TABLE_COLUMNS,
  ...FDX_TABLE_COLUMNS,
  ...GIFT_TABLE_COLUMNS,
  ...GIVING_TABLE_COLUMNS,
  ...GRANTMAKING_TABLE_COLUMNS,
  ...IDEMPOTENCY_TABLE_COLUMNS,
  ...IDENTITY_TABLE_COLUMNS,
  ...LEDGER_TABLE_COLUMNS,
  ...OAUTH_TABLE_COLUMNS,
  organizations: columns<OrganizationsTable>()([
    'id',
    'kind',
    'ein',
    'name',
    'address_line1',
    'address_line2',
    'city',
    'region',
    'postal_code',
    'country',
    'require_mfa',
    'require_second_approver',
    'created_at',
    'updated_at',
  ]),
  users: columns<UsersTable>()([
    'id',
    'email',
    'password_hash',
    'display_name',
    'disabled_at',
    'password_changed_at',
    'credentials_epoch',
    'created_at',
    'updated_at',
  ]),
  memberships: columns<MembershipsTable>()(['organization_id', 'user_id', 'role', 'created_at', 'updated_at']),
  audit_events: columns<AuditEventsTable>()([
    'id',
    'occurred_at',
    'event',
    'environment',
    'actor_user_id',
    'organization_id',
    'client_id',
    'ip',
    'request_id',
    'details',
    'aggregate_key',
  ]),
  demo_seed_steps: columns<DemoSeedStepsTable>()(['name', 'applied_at']),
  server_keys: columns<ServerKeysTable>()(['name', 'kid', 'value', 'created_at', 'activates_at']),
  login_throttle: columns<LoginThrottleTable>()(['key', 'points', 'expire']),
  api_keys: columns<ApiKeysTable>()([
    'id',
    'environment',
    'organization_id',
    'key_hash',
    'key_prefix',
    'name',
    'created_at',
    'last_used_at',
    'revoked_at',
  ]),
  one_time_secrets: columns<OneTimeSecretsTable>()(['id', 'purpose', 'binding', 'sealed', 'expires_at']),
  connects: columns<ConnectsTable>()([
    'id',
    'environment',
    'organization_id',
    'name',
    'recipient_organization_id',
    'contact',
    'metadata',
    'active',
    'created_by',
    'created_at',
    'updated_at',
  ]),
  donations: columns<DonationsTable>()([
    'id',
    'environment',
    'organization_id',
    'external_id',
    'payment_source_id',
    'deposit_id',
    'dafpay_tracking_id',
    'amount_gross',
    'amount_net',
    'amount_fee',
    'currency',
    'purpose',
    'note',
    'primary_donor',
    'payment_status',
    'created_at',
    'updated_at',
    'canceled_at',
    ...DONATION_GIFT_COLUMNS,
  ]),
  grants: columns<GrantsTable>()([
    'id',
    'environment',
    'organization_id',
    'connect_id',
    'workflow_session_id',
    'tracking_id',
    'fund_id',
    'external_grant_id',
    'amount',
    'status',
    'first_name',
    'last_name',
    'email',
    'phone',
    'note',
    'payment_channel',
    'daf_id',
    'donor_account_id',
    'grant_request_id',
    'recurring_grant_id',
    'application_fee',
    'metadata',
    'address',
    'designation',
    'completed_at',
    'canceled_at',
    'created_at',
    'updated_at',
  ]),
} satisfies { [K in keyof Database]: readonly string[] };

export type Organization = Selectable<OrganizationsTable>;
export type NewOrganization = Insertable<OrganizationsTable>;
export type User = Selectable<UsersTable>;
