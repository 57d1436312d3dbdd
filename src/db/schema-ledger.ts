import type { ColumnType } from 'kysely';
import { columns, type CreatedAt } from './column-types.js';
import type { Environment } from './schema.js';

/** Table types of the double-entry ledger (migration 20261129120000; docs/ledger.md). */

/** What an account is for (docs/ledger.md, "Accounts and purposes"); the migration's check lists the same. */
export const LEDGER_PURPOSES = ['available', 'held', 'clearing', 'settlement', 'external'] as const;
export type LedgerPurpose = (typeof LEDGER_PURPOSES)[number];

/** A bigint of cents: read as pg's text, written as a safe integer. */
type Cents = ColumnType<string, number, never>;

export interface LedgerAccountsTable {
  id: string;
  environment: Environment;
  organization_id: string | null;
  purpose: LedgerPurpose;
  may_go_negative: boolean;
  /** Kept by the entries' trigger only: never written by code. */
  balance: ColumnType<string, never, never>;
  created_at: CreatedAt;
}

export interface LedgerTransfersTable {
  id: string;
  environment: Environment;
  kind: string;
  reference_type: string;
  reference_id: string;
  created_at: CreatedAt;
}

export interface LedgerEntriesTable {
  id: string;
  transfer_id: string;
  account_id: string;
  environment: Environment;
  amount: Cents;
  created_at: CreatedAt;
}

export interface LedgerDatabase {
  ledger_accounts: LedgerAccountsTable;
  ledger_transfers: LedgerTransfersTable;
  ledger_entries: LedgerEntriesTable;
}

export const LEDGER_TABLE_COLUMNS = {
  ledger_accounts: columns<LedgerAccountsTable>()([
    'id',
    'environment',
    'organization_id',
    'purpose',
    'may_go_negative',
    'balance',
    'created_at',
  ]),
  ledger_transfers: columns<LedgerTransfersTable>()(['id', 'environment', 'kind', 'reference_type', 'reference_id', 'created_at']),
  ledger_entries: columns<LedgerEntriesTable>()(['id', 'transfer_id', 'account_id', 'environment', 'amount', 'created_at']),
};
