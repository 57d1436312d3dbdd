import type { Insertable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import type { InboundTransfersTable, InboundTransferStatus } from '../db/schema-grantmaking.js';
import { newestFirstPage, type Cursor } from '../db/keyset.js';
import type { Scope } from './accounts-repository.js';

/** Inbound transfers (docs/grantmaking.md, "Inbound transfers"). */

export function insertInboundTransfer(db: Executor, values: Insertable<InboundTransfersTable>) {
  return db.insertInto('inbound_transfers').values(values).returningAll().executeTakeFirstOrThrow();
}

export function listInboundTransfers(db: Executor, scope: Scope, cursor: Cursor | undefined, limit: number) {
  const query = db
    .selectFrom('inbound_transfers')
    .selectAll()
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment);
  return newestFirstPage(query, cursor, limit).execute();
}

/**
 * One inbound transfer, of the organization when given (the API), else of the environment (an
 * operator); `forUpdate` locks the row, so concurrent changes of its status run one at a time.
 */
export function findInboundTransfer(
  db: Executor,
  where: { environment?: Environment; organizationId?: string },
  id: string,
  forUpdate = false,
) {
  let query = db.selectFrom('inbound_transfers').selectAll().where('id', '=', id);
  if (where.environment !== undefined) query = query.where('environment', '=', where.environment);
  if (where.organizationId !== undefined) query = query.where('organization_id', '=', where.organizationId);
  return (forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

export function updateInboundTransferStatus(
  db: Executor,
  id: string,
  changes: { status: InboundTransferStatus; settlement_reference?: string | null },
) {
  return db
    .updateTable('inbound_transfers')
    .set({ ...changes, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The ledger pair of a financial account (of the transfer's environment). */
export function findFinancialAccountPair(db: Executor, environment: Environment, id: string) {
  return db
    .selectFrom('financial_accounts')
    .select(['available_ledger_account_id', 'held_ledger_account_id'])
    .where('id', '=', id)
    .where('environment', '=', environment)
    .executeTakeFirst();
}

/** The auto-fund transfer opened for a disbursement, if any (at most one: a unique index). */
export function findTransferOfDisbursement(db: Executor, disbursementId: string, forUpdate = false) {
  const query = db.selectFrom('inbound_transfers').selectAll().where('disbursement_id', '=', disbursementId);
  return (forUpdate ? query.forUpdate() : query).executeTakeFirst();
}
