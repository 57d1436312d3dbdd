import type { ColumnType, Generated } from 'kysely';
import { columns, type CreatedAt, type Json, type UpdatedAt } from './column-types.js';
import type { Environment } from './schema.js';

/** Table types of the donor-advised-fund tables (migration 20261122000600; its events, webhook and mail tables are in schema-events.ts). */

export type DonorAccountStatus = 'pending' | 'approved' | 'rejected';
export type GrantRequestStatus = 'awaiting_account_decision' | 'pending' | 'submitted' | 'rejected';

export interface DonorAccountsTable {
  id: string;
  environment: Environment;
  fund_provider_id: string;
  status: Generated<DonorAccountStatus>;
  email: string;
  first_name: string | null;
  last_name: string | null;
  phone: string | null;
  external_id: string | null;
  metadata: Json<Record<string, string>>;
  disabled: Generated<boolean>;
  approved_at: Date | null;
  approved_by: string | null;
  rejected_at: Date | null;
  rejected_by: string | null;
  rejection_reason: string | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface DonorAuthorizationTokensTable {
  id: string;
  environment: Environment;
  fund_provider_id: string;
  donor_account_id: string;
  code_hash: string;
  status: Generated<'pending' | 'verified' | 'revoked'>;
  metadata: Json<Record<string, string>>;
  created_at: CreatedAt;
  expires_at: Date;
  verified_at: Date | null;
  revoked_at: Date | null;
}

/** One row per provider and environment: the current verify window and the attempts reserved in it. */
export interface DonorTokenVerifyLimitsTable {
  fund_provider_id: string;
  environment: Environment;
  window_start: Date;
  attempts: number;
}

export interface GivingPoolsTable {
  id: Generated<string>;
  environment: Environment;
  fund_provider_id: string;
  donor_account_id: string;
  name: string;
  metadata: Json<Record<string, string>>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface GrantRequestsTable {
  id: string;
  environment: Environment;
  fund_provider_id: string;
  donor_account_id: string;
  giving_pool_id: string | null;
  status: GrantRequestStatus;
  ein: string;
  nonprofit_name: string | null;
  amount_cents: ColumnType<string, number | string, number | string>;
  frequency: 'one_time' | 'monthly' | 'quarterly' | 'annual';
  form_url: string;
  purpose: string | null;
  note: string | null;
  donor_contact: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  rejection_reason: string | null;
  external_grant_id: string | null;
  comment: string | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface DafDatabase {
  donor_accounts: DonorAccountsTable;
  donor_authorization_tokens: DonorAuthorizationTokensTable;
  donor_token_verify_limits: DonorTokenVerifyLimitsTable;
  giving_pools: GivingPoolsTable;
  grant_requests: GrantRequestsTable;
}

export const DAF_TABLE_COLUMNS = {
  donor_accounts: columns<DonorAccountsTable>()([
    'id',
    'environment',
    'fund_provider_id',
    'status',
    'email',
    'first_name',
    'last_name',
    'phone',
    'external_id',
    'metadata',
    'disabled',
    'approved_at',
    'approved_by',
    'rejected_at',
    'rejected_by',
    'rejection_reason',
    'created_at',
    'updated_at',
  ]),
  donor_authorization_tokens: columns<DonorAuthorizationTokensTable>()([
    'id',
    'environment',
    'fund_provider_id',
    'donor_account_id',
    'code_hash',
    'status',
    'metadata',
    'created_at',
    'expires_at',
    'verified_at',
    'revoked_at',
  ]),
  donor_token_verify_limits: columns<DonorTokenVerifyLimitsTable>()(['fund_provider_id', 'environment', 'window_start', 'attempts']),
  giving_pools: columns<GivingPoolsTable>()([
    'id',
    'environment',
    'fund_provider_id',
    'donor_account_id',
    'name',
    'metadata',
    'created_at',
    'updated_at',
  ]),
  grant_requests: columns<GrantRequestsTable>()([
    'id',
    'environment',
    'fund_provider_id',
    'donor_account_id',
    'giving_pool_id',
    'status',
    'ein',
    'nonprofit_name',
    'amount_cents',
    'frequency',
    'form_url',
    'purpose',
    'note',
    'donor_contact',
    'rejection_reason',
    'external_grant_id',
    'comment',
    'created_at',
    'updated_at',
  ]),
} satisfies { [K in keyof DafDatabase]: readonly string[] };
