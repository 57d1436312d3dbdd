import type { Insertable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import type { DisbursementsTable, DisbursementStatus, DisbursementTransactionsTable, RejectionReason } from '../db/schema-grantmaking.js';
import { newestFirstPage, type Cursor } from '../db/keyset.js';
import type { Scope } from './accounts-repository.js';

/** Disbursements and their transactions (docs/grantmaking.md, "Disbursements"). */

export function insertDisbursement(db: Executor, values: Insertable<DisbursementsTable>) {
  return db.insertInto('disbursements').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function insertDisbursementTransactions(db: Executor, values: Insertable<DisbursementTransactionsTable>[]) {
  if (values.length === 0) return;
  await db.insertInto('disbursement_transactions').values(values).execute();
}

export function transactionsOf(db: Executor, disbursementIds: readonly string[]) {
  if (disbursementIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('disbursement_transactions')
    .selectAll()
    .where('disbursement_id', 'in', disbursementIds)
    .orderBy('disbursement_id')
    .orderBy('position')
    .execute();
}

export function listDisbursements(
  db: Executor,
  scope: Scope,
  filter: { recipientOrganizationId?: string; idempotencyKey?: string },
  cursor: Cursor | undefined,
  limit: number,
) {
  let query = db
    .selectFrom('disbursements')
    .selectAll()
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment);
  if (filter.recipientOrganizationId !== undefined) query = query.where('recipient_organization_id', '=', filter.recipientOrganizationId);
  if (filter.idempotencyKey !== undefined) query = query.where('idempotency_key', '=', filter.idempotencyKey);
  return newestFirstPage(query, cursor, limit).execute();
}

/**
 * One disbursement, of the organization when given (the API), else of the environment (the
 * inbound transfers' resubmission); `forUpdate` locks the row, so its status changes one at a time.
 */
export function findDisbursement(
  db: Executor,
  where: { environment: Environment; organizationId?: string },
  id: string,
  forUpdate = false,
) {
  let query = db.selectFrom('disbursements').selectAll().where('id', '=', id).where('environment', '=', where.environment);
  if (where.organizationId !== undefined) query = query.where('organization_id', '=', where.organizationId);
  return (forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

export function updateDisbursement(
  db: Executor,
  id: string,
  changes: {
    status?: DisbursementStatus;
    approved_by?: string;
    approved_at?: Date;
    canceled_by?: string;
    canceled_at?: Date;
    stopped_by?: string;
    stopped_at?: Date;
    settlement_reference?: string;
    verified_at?: Date;
    rejection_reason?: RejectionReason;
    rejected_at?: Date;
  },
) {
  return db
    .updateTable('disbursements')
    .set({ ...changes, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Locks a financial account's row to the end of the transaction: every decision that reads its
 * available balance and may place a hold on it (an approval, a resubmission) runs one at a time,
 * so two of them never both spend the same money. The lock is always taken before any
 * disbursement's row, so the two kinds of lock are taken in one order (no deadlock).
 */
export async function lockFinancialAccount(db: Executor, environment: Environment, id: string) {
  return db
    .selectFrom('financial_accounts')
    .select(['id', 'available_ledger_account_id', 'held_ledger_account_id'])
    .where('id', '=', id)
    .where('environment', '=', environment)
    .forUpdate()
    .executeTakeFirstOrThrow();
}

/**
 * The account's disbursements waiting for its balance, oldest first, locked. An auto-fund one is
 * not among them: it waits for its own inbound transfer (docs/grantmaking.md, "auto_fund").
 */
export function lockAwaitingBalance(db: Executor, environment: Environment, financialAccountId: string) {
  return db
    .selectFrom('disbursements')
    .selectAll()
    .where('financial_account_id', '=', financialAccountId)
    .where('environment', '=', environment)
    .where('status', '=', 'awaiting_balance')
    .where('auto_fund', '=', false)
    .orderBy('created_at')
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** The programs of the grantmaker's environment whose grant disbursements are enabled. */
export function enabledPrograms(db: Executor, scope: Scope) {
  return db
    .selectFrom('programs')
    .select(['id', 'name', 'grant_disbursement_status'])
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where('grant_disbursement_status', '=', 'enabled')
    .orderBy('created_at')
    .limit(2)
    .execute();
}

export function programNames(db: Executor, ids: readonly string[]) {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('programs').select(['id', 'name']).where('id', 'in', ids).execute();
}

/** The grantmaker's disbursements account in the environment (provisioning opens one: docs/grantmaking.md). */
export function disbursementsAccountOf(db: Executor, scope: Scope) {
  return db
    .selectFrom('financial_accounts')
    .select('id')
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where('account_type', '=', 'disbursements')
    .executeTakeFirst();
}

/**
 * The recipient: a directory organization by its published id (docs/directory.md, "Organization
 * ids"). Read here rather than through src/directory, which depends on accounts, which
 * provisions grantmakers through this folder: the folders import one another one way only.
 */
export function findRecipientOrganization(db: Executor, id: string) {
  return db.selectFrom('directory_organizations').select('id').where('id', '=', id).executeTakeFirst();
}

/**
 * Whether the recipient's directory row shows an eligible, deductible charity (docs/grantmaking.md,
 * "Verification"): an organization listed through an approved verification request (the operator
 * verified it then), or one whose IRS data has deductibility code 1 (contributions deductible)
 * and exempt status code 01 (unconditional exemption). Anything else waits for an operator.
 */
export async function isEligibleRecipient(db: Executor, id: string): Promise<boolean> {
  const row = await db
    .selectFrom('directory_organizations')
    .select(['source', 'deductibility_code', 'exempt_status_code'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return row.source === 'verification_request' || (row.deductibility_code === '1' && row.exempt_status_code === '01');
}

/** A disbursement of any grantmaker and environment, by id (an operator's command), locked when `forUpdate`. */
export function findAnyDisbursement(db: Executor, id: string, forUpdate = false) {
  const query = db.selectFrom('disbursements').selectAll().where('id', '=', id);
  return (forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

/** The grantmaker's disbursements of `ids`, by id (the order their row locks are taken in when `forUpdate`). */
export function findDisbursements(db: Executor, scope: Scope, ids: readonly string[], forUpdate = false) {
  const query = db
    .selectFrom('disbursements')
    .selectAll()
    .where('id', 'in', ids)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .orderBy('id');
  return (forUpdate ? query.forUpdate() : query).execute();
}

/** The e-mail addresses of users by id (who approved, canceled or stopped, as published). */
export function userEmails(db: Executor, userIds: readonly string[]) {
  if (userIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('users').select(['id', 'email']).where('id', 'in', userIds).execute();
}

/** A recipient's `validating_organization` disbursements in the environment, every grantmaker's, oldest first. */
export function validatingOfRecipient(db: Executor, environment: Environment, recipientOrganizationId: string) {
  return db
    .selectFrom('disbursements')
    .select(['id', 'organization_id'])
    .where('environment', '=', environment)
    .where('recipient_organization_id', '=', recipientOrganizationId)
    .where('status', '=', 'validating_organization')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}
