import type { ColumnType, Generated } from 'kysely';
import { columns, type CreatedAt, type Json, type UpdatedAt } from './column-types.js';
import type { Environment } from './schema.js';

/** Table types of the FDX bank-account data (migration 20261122000500_fdx.sql). */

/** Cents in a bigint column (pg reads bigint as a string). */
type Cents = ColumnType<string, number | bigint | string, number | bigint | string>;
/**
 * A date column, written as YYYY-MM-DD. pg reads dates as a Date at local midnight, so
 * repositories select them as text (`col::text`) instead of trusting the process time zone.
 */
type DateOnly = ColumnType<Date, string, string>;

export type DepositAccountStatus =
  'OPEN' | 'CLOSED' | 'DELINQUENT' | 'NEGATIVECURRENTBALANCE' | 'PAID' | 'PENDINGCLOSE' | 'PENDINGOPEN' | 'RESTRICTED';
export const DEPOSIT_TRANSACTION_TYPES = [
  'ADJUSTMENT',
  'ATMDEPOSIT',
  'ATMWITHDRAWAL',
  'BILLPAYMENT',
  'CHECK',
  'DEPOSIT',
  'DIRECTDEPOSIT',
  'DIVIDEND',
  'FEE',
  'INTEREST',
  'POSCREDIT',
  'POSDEBIT',
  'PREAUTHORIZEDDEPOSIT',
  'PREAUTHORIZEDWITHDRAWAL',
  'TRANSFER',
  'WITHDRAWAL',
] as const;
export type DepositTransactionType = (typeof DEPOSIT_TRANSACTION_TYPES)[number];

export interface DepositAccountsTable {
  id: Generated<string>;
  environment: Environment;
  organization_id: string;
  account_number: string;
  routing_transit_number: string;
  product_name: string;
  nickname: string | null;
  description: string | null;
  status: Generated<DepositAccountStatus>;
  currency: Generated<string>;
  opened_on: DateOnly;
  closed_on: DateOnly | null;
  opening_balance: Cents;
  created_at: CreatedAt;
}

export interface DepositStatementsTable {
  id: Generated<string>;
  account_id: string;
  period_start: DateOnly;
  period_end: DateOnly;
  created_at: CreatedAt;
}

export interface DepositTransactionsTable {
  id: Generated<string>;
  account_id: string;
  transaction_timestamp: Date;
  posted_timestamp: Date | null;
  status: 'POSTED' | 'PENDING';
  debit_credit: 'DEBIT' | 'CREDIT';
  amount: Cents;
  transaction_type: DepositTransactionType;
  description: string;
  memo: string | null;
  reference: string;
  payee: string | null;
  check_number: number | null;
  created_at: CreatedAt;
}

/** One granted resource of an FDX consent, as stored (src/authorizations/fdx-consents.ts gives it its types). */
export interface FdxConsentResourceRow {
  resourceType: string;
  resourceId: string;
  dataClusters: string[];
}

/** FDX consent grants (migration 20261128100000_fdx_consents.sql). */
export interface FdxConsentsTable {
  id: string;
  environment: Environment;
  organization_id: string;
  client_id: string;
  grant_id: string;
  user_id: string;
  status: Generated<'PENDING' | 'ACTIVE' | 'EXPIRED' | 'REVOKED'>;
  duration_type: 'ONE_TIME' | 'TIME_BOUND' | 'PERSISTENT';
  duration_period: number | null;
  lookback_period: number;
  resources: Json<FdxConsentResourceRow[]>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  expires_at: Date;
  revoked_at: Date | null;
  revocation_reason: string | null;
  revocation_initiator: string | null;
}

export interface FdxDatabase {
  fdx_consents: FdxConsentsTable;
  deposit_accounts: DepositAccountsTable;
  deposit_statements: DepositStatementsTable;
  deposit_transactions: DepositTransactionsTable;
}

export const FDX_TABLE_COLUMNS = {
  fdx_consents: columns<FdxConsentsTable>()([
    'id',
    'environment',
    'organization_id',
    'client_id',
    'grant_id',
    'user_id',
    'status',
    'duration_type',
    'duration_period',
    'lookback_period',
    'resources',
    'created_at',
    'updated_at',
    'expires_at',
    'revoked_at',
    'revocation_reason',
    'revocation_initiator',
  ]),
  deposit_accounts: columns<DepositAccountsTable>()([
    'id',
    'environment',
    'organization_id',
    'account_number',
    'routing_transit_number',
    'product_name',
    'nickname',
    'description',
    'status',
    'currency',
    'opened_on',
    'closed_on',
    'opening_balance',
    'created_at',
  ]),
  deposit_statements: columns<DepositStatementsTable>()(['id', 'account_id', 'period_start', 'period_end', 'created_at']),
  deposit_transactions: columns<DepositTransactionsTable>()([
    'id',
    'account_id',
    'transaction_timestamp',
    'posted_timestamp',
    'status',
    'debit_credit',
    'amount',
    'transaction_type',
    'description',
    'memo',
    'reference',
    'payee',
    'check_number',
    'created_at',
  ]),
} satisfies { [K in keyof FdxDatabase]: readonly string[] };
