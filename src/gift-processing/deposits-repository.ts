import { sql } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import { runPrepared } from '../db/prepared-statements.js';
import { newestFirstPage, type Cursor } from '../db/keyset.js';

/** Deposits as the API reads them (docs/gift-processing.md, "The API"); ingestion writes them. */

export type Scope = { organizationId: string; environment: Environment };

export interface DepositFilters {
  paymentSourceIds?: string[];
  settledAfter?: Date;
  settledBefore?: Date;
}

const DEPOSIT_COLUMNS = [
  'id',
  'payment_source_id',
  'financial_account_id',
  'status',
  'amount',
  'currency',
  'description',
  'rail',
  'rail_details',
  'settled_at',
  'returned_at',
  'bank_created_at',
  'created_at',
  'updated_at',
] as const;

export function findDeposit(db: Executor, scope: Scope, id: string) {
  return db
    .selectFrom('deposits')
    .select(DEPOSIT_COLUMNS)
    .where('id', '=', id)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .executeTakeFirst();
}

/** Newest first, keyset-paged (deposits_page_idx); a settled_at filter leaves out the unsettled. Prepared: each combination of filters is one text (at most 16). */
export function listDeposits(db: Executor, scope: Scope, filters: DepositFilters, cursor: Cursor | undefined, limit: number) {
  const { paymentSourceIds, settledAfter, settledBefore } = filters;
  const query = db
    .selectFrom('deposits')
    .select(DEPOSIT_COLUMNS)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .$if(Boolean(paymentSourceIds?.length), (q) => q.where('payment_source_id', '=', sql<string>`any(${paymentSourceIds}::text[])`))
    .$if(settledAfter !== undefined, (q) => q.where('settled_at', '>', settledAfter!))
    .$if(settledBefore !== undefined, (q) => q.where('settled_at', '<', settledBefore!));
  return runPrepared(db, 'gift_deposits_page', newestFirstPage(query, cursor, limit));
}
