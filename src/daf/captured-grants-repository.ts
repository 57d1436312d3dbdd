import type { Selectable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { GrantsTable } from '../db/schema.js';
import type { GrantHistoryStatus } from '../db/schema-giving.js';

/**
 * The DAFpay grants a fund provider's decisions move (docs/giving.md, "A grant's life"): a grant
 * captured at an integrated DAF follows its donor account and its grant request.
 */

export type CapturedGrantRow = Selectable<GrantsTable>;

export function insertGrantStatus(db: Executor, grantId: string, status: GrantHistoryStatus, comment: string | null = null) {
  return db.insertInto('grant_statuses').values({ grant_id: grantId, status, comment }).execute();
}

/** Moves a grant to a status, stamping completed_at or canceled_at. */
export function setGrantStatus(db: Executor, id: string, status: string, changes: Partial<{ external_grant_id: string | null }> = {}) {
  return db
    .updateTable('grants')
    .set({
      ...changes,
      status,
      updated_at: new Date(),
      ...(status === 'completed' ? { completed_at: new Date() } : {}),
      ...(status === 'canceled' ? { canceled_at: new Date() } : {}),
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The grants waiting on a donor account's decision, locked. */
export function grantsAwaitingAccount(db: Executor, donorAccountId: string) {
  return db
    .selectFrom('grants')
    .selectAll()
    .where('donor_account_id', '=', donorAccountId)
    .where('status', '=', 'awaiting_account_approval')
    .forUpdate()
    .execute();
}

/** The grant captured with a grant request, locked. */
export function grantOfRequest(db: Executor, grantRequestId: string) {
  return db.selectFrom('grants').selectAll().where('grant_request_id', '=', grantRequestId).forUpdate().executeTakeFirst();
}
