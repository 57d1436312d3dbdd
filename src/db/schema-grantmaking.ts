import type { ColumnType } from 'kysely';
import { columns, type CreatedAt, type Json, type UpdatedAt } from './column-types.js';
import type { Environment } from './schema.js';

/** Table types of grantmakers' financial accounts, programs and inbound transfers (migration 20261129130100; docs/grantmaking.md). */

export type FinancialAccountType = 'disbursements' | 'processing';
export type ProgramStatus = 'enabled' | 'disabled';
export const INBOUND_TRANSFER_STATUSES = ['pending', 'completed', 'canceled', 'failed'] as const;
export type InboundTransferStatus = (typeof INBOUND_TRANSFER_STATUSES)[number];

/** The published DisbursementStatus, in its lifecycle's order (docs/grantmaking.md, "Disbursements"). */
export const DISBURSEMENT_STATUSES = [
  'pending_approval',
  'canceled',
  'awaiting_verification',
  'rejected',
  'validating_organization',
  'awaiting_account_claim',
  'awaiting_balance',
  'submitted',
  'stopped',
  'completed',
  'failed',
] as const;
export type DisbursementStatus = (typeof DISBURSEMENT_STATUSES)[number];
export const DONATION_TYPES = ['donor_advised_fund_grant', 'corporate_match'] as const;
export type DonationType = (typeof DONATION_TYPES)[number];
/** The published DisbursementRejection reasons. */
export const REJECTION_REASONS = [
  'insufficient_funds',
  'incorrect_recipient',
  'suspected_fraud',
  'requested_by_user',
  'acceptance_criteria_failed',
  'duplicate',
  'unknown',
] as const;
export type RejectionReason = (typeof REJECTION_REASONS)[number];

export interface FinancialAccountsTable {
  id: string;
  environment: Environment;
  organization_id: string;
  account_type: FinancialAccountType;
  name: string;
  bank_provider: string;
  available_ledger_account_id: string;
  held_ledger_account_id: string;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface ProgramsTable {
  id: string;
  environment: Environment;
  organization_id: string;
  name: string;
  description: string | null;
  grant_disbursement_status: ProgramStatus;
  gift_processing_status: ProgramStatus;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface InboundTransfersTable {
  id: string;
  environment: Environment;
  organization_id: string;
  financial_account_id: string;
  /** Cents: a bigint, read as pg's text. */
  amount: ColumnType<string, number, never>;
  description: string | null;
  status: ColumnType<InboundTransferStatus, InboundTransferStatus | undefined, InboundTransferStatus>;
  settlement_reference: string | null;
  /** The disbursement an auto-fund transfer was opened for (migration 20261129160000). */
  disbursement_id: ColumnType<string | null, string | null | undefined, never>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface DisbursementsTable {
  id: string;
  environment: Environment;
  organization_id: string;
  financial_account_id: string;
  program_id: string;
  recipient_organization_id: string;
  /** Cents: a bigint, read as pg's text. */
  amount: ColumnType<string, number, never>;
  description: string | null;
  status: ColumnType<DisbursementStatus, DisbursementStatus | undefined, DisbursementStatus>;
  idempotency_key: string | null;
  created_by: string;
  approved_by: string | null;
  approved_at: Date | null;
  canceled_at: Date | null;
  settlement_reference: string | null;
  auto_fund: ColumnType<boolean, boolean | undefined, never>;
  bypass_organization_verification: ColumnType<boolean, boolean | undefined, never>;
  verified_at: Date | null;
  rejection_reason: RejectionReason | null;
  rejected_at: Date | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  /** Who canceled or stopped it, as approved_by (migration 20261129150000). */
  canceled_by: string | null;
  stopped_by: string | null;
  stopped_at: Date | null;
}

/** The rails a disbursement's payment travels on (docs/grantmaking.md, "Rails and transfers"). */
export const DISBURSEMENT_RAILS = ['check', 'ach', 'account'] as const;
export type DisbursementRail = (typeof DISBURSEMENT_RAILS)[number];
/** The published CheckTransfer, AchTransfer and AccountTransfer statuses this product uses. */
export type DisbursementTransferStatus =
  'issued' | 'deposited' | 'stopped' | 'returned' | 'submitted' | 'completed' | 'pending_approval' | 'complete';
export const STOP_REASONS = ['mail_delivery_failure', 'not_authorized', 'voided', 'unknown'] as const;
export type StopReason = (typeof STOP_REASONS)[number];

/** The published PostalAddress a check is mailed to. */
export interface MailingAddress {
  line1: string;
  line2?: string;
  city: string;
  state: string;
  postal_code: string;
  country: string;
}

/** One payment attempt of a disbursement on its rail (migration 20261129150000). */
export interface DisbursementTransfersTable {
  id: string;
  disbursement_id: string;
  environment: Environment;
  rail: DisbursementRail;
  /** Cents: a bigint, read as pg's text. */
  amount: ColumnType<string, number, never>;
  status: DisbursementTransferStatus;
  /** jsonb: read as the address, written as its JSON text. */
  mailing_address: ColumnType<MailingAddress | null, string | null | undefined, string | null>;
  memo: string | null;
  recipient_name: string | null;
  check_number: string | null;
  stop_reason: StopReason | null;
  completed_at: Date | null;
  returned_at: Date | null;
  stopped_at: Date | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

/** donors, daf_grant, corporate_match and metadata of a transaction, as the request gave them. */
export interface DisbursementTransactionDetails {
  donors?: unknown;
  daf_grant?: unknown;
  corporate_match?: unknown;
  metadata?: Record<string, string>;
  /** 2026-01-15's transaction description and DAF organization name (gateway/grantmaking/disbursement-shapes.ts). */
  description?: string;
  daf_organization_name?: string;
}

export interface DisbursementTransactionsTable {
  id: string;
  disbursement_id: string;
  position: number;
  amount: ColumnType<string, number, never>;
  fee_amount: ColumnType<string | null, number | null, never>;
  type: DonationType;
  internal_transaction_id: string | null;
  purpose: string | null;
  note: string | null;
  recipient_name: string | null;
  details: Json<DisbursementTransactionDetails>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface PlatformLedgerAccountsTable {
  environment: Environment;
  /** external, and dafpay_network (migration 20261129210100; docs/giving.md, "Money"). */
  purpose: 'external' | 'dafpay_network';
  ledger_account_id: string;
}

export interface GrantmakingDatabase {
  financial_accounts: FinancialAccountsTable;
  programs: ProgramsTable;
  inbound_transfers: InboundTransfersTable;
  platform_ledger_accounts: PlatformLedgerAccountsTable;
  disbursements: DisbursementsTable;
  disbursement_transactions: DisbursementTransactionsTable;
  disbursement_transfers: DisbursementTransfersTable;
}

export const GRANTMAKING_TABLE_COLUMNS = {
  financial_accounts: columns<FinancialAccountsTable>()([
    'id',
    'environment',
    'organization_id',
    'account_type',
    'name',
    'bank_provider',
    'available_ledger_account_id',
    'held_ledger_account_id',
    'created_at',
    'updated_at',
  ]),
  programs: columns<ProgramsTable>()([
    'id',
    'environment',
    'organization_id',
    'name',
    'description',
    'grant_disbursement_status',
    'gift_processing_status',
    'created_at',
    'updated_at',
  ]),
  inbound_transfers: columns<InboundTransfersTable>()([
    'id',
    'environment',
    'organization_id',
    'financial_account_id',
    'amount',
    'description',
    'status',
    'settlement_reference',
    'disbursement_id',
    'created_at',
    'updated_at',
  ]),
  platform_ledger_accounts: columns<PlatformLedgerAccountsTable>()(['environment', 'purpose', 'ledger_account_id']),
  disbursements: columns<DisbursementsTable>()([
    'id',
    'environment',
    'organization_id',
    'financial_account_id',
    'program_id',
    'recipient_organization_id',
    'amount',
    'description',
    'status',
    'idempotency_key',
    'created_by',
    'approved_by',
    'approved_at',
    'canceled_at',
    'settlement_reference',
    'auto_fund',
    'bypass_organization_verification',
    'verified_at',
    'rejection_reason',
    'rejected_at',
    'created_at',
    'updated_at',
    'canceled_by',
    'stopped_by',
    'stopped_at',
  ]),
  disbursement_transfers: columns<DisbursementTransfersTable>()([
    'id',
    'disbursement_id',
    'environment',
    'rail',
    'amount',
    'status',
    'mailing_address',
    'memo',
    'recipient_name',
    'check_number',
    'stop_reason',
    'completed_at',
    'returned_at',
    'stopped_at',
    'created_at',
    'updated_at',
  ]),
  disbursement_transactions: columns<DisbursementTransactionsTable>()([
    'id',
    'disbursement_id',
    'position',
    'amount',
    'fee_amount',
    'type',
    'internal_transaction_id',
    'purpose',
    'note',
    'recipient_name',
    'details',
    'created_at',
    'updated_at',
  ]),
};
