import type { ColumnType } from 'kysely';
import { columns, type CreatedAt, type UpdatedAt } from './column-types.js';
import type { Environment } from './schema.js';

/** Table types of grantmakers' financial accounts, programs and inbound transfers (migration 20261129130100; docs/grantmaking.md). */

export type FinancialAccountType = 'disbursements' | 'processing';
export type ProgramStatus = 'enabled' | 'disabled';
export const INBOUND_TRANSFER_STATUSES = ['pending', 'completed', 'canceled', 'failed'] as const;
export type InboundTransferStatus = (typeof INBOUND_TRANSFER_STATUSES)[number];

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
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface PlatformLedgerAccountsTable {
  environment: Environment;
  purpose: 'external';
  ledger_account_id: string;
}

export interface GrantmakingDatabase {
  financial_accounts: FinancialAccountsTable;
  programs: ProgramsTable;
  inbound_transfers: InboundTransfersTable;
  platform_ledger_accounts: PlatformLedgerAccountsTable;
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
    'created_at',
    'updated_at',
  ]),
  platform_ledger_accounts: columns<PlatformLedgerAccountsTable>()(['environment', 'purpose', 'ledger_account_id']),
};
