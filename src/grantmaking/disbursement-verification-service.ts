import { recordAudit } from '../audit/audit-log.js';
import type { Db } from '../db/database.js';
import { inTransaction, type Trx } from '../db/executor.js';
import { REJECTION_REASONS, type RejectionReason } from '../db/schema-grantmaking.js';
import { invalid, notFound, precondition } from '../errors/domain-error.js';
import { centsOf } from '../ledger/ledger.js';
import { emitEvent } from '../webhooks/outbox.js';
import { balanceStep, disbursementEvent, type AccountPair } from './disbursement-funding-service.js';
import {
  findAnyDisbursement,
  isEligibleRecipient,
  lockFinancialAccount,
  updateDisbursement,
  type listDisbursements,
} from './disbursements-repository.js';

/**
 * Recipients' verification (docs/grantmaking.md, "Verification"): at approval a recipient the
 * directory shows eligible is verified, another waits in `awaiting_verification` (unless the
 * grantmaker bypassed it) for an operator's `admin disbursements verify` or `reject`. A verified
 * disbursement goes on to the balance step (disbursement-funding-service.ts).
 */

type DisbursementRow = Awaited<ReturnType<typeof listDisbursements>>[number];

/**
 * The step of every approval, one or in bulk: a `pending_approval` row, locked after its account,
 * waits in `awaiting_verification` when its recipient needs an operator's verification and the
 * grantmaker did not bypass it (docs/grantmaking.md, "Verification"); otherwise it goes through
 * the balance step. An eligible recipient is verified at approval (`verified_at`). One
 * `disbursement.updated` in the same transaction.
 */
export async function approveLockedRow(trx: Trx, row: DisbursementRow, account: AccountPair, approvedBy: string): Promise<DisbursementRow> {
  const now = new Date();
  const eligible = await isEligibleRecipient(trx, row.recipient_organization_id);
  if (!eligible && !row.bypass_organization_verification) {
    const waiting = await updateDisbursement(trx, row.id, { status: 'awaiting_verification', approved_by: approvedBy, approved_at: now });
    await emitEvent(trx, disbursementEvent(waiting, 'disbursement.updated'));
    return waiting;
  }
  const approved = await updateDisbursement(trx, row.id, {
    approved_by: approvedBy,
    approved_at: now,
    ...(eligible ? { verified_at: now } : {}),
  });
  return balanceStep(trx, approved, account);
}

/** An operator's decision on an `awaiting_verification` disbursement, by id, in either environment. */
async function decideVerification(
  db: Db,
  id: string,
  decide: (trx: Trx, row: DisbursementRow, account: AccountPair) => Promise<DisbursementRow>,
  audit: (row: DisbursementRow) => { event: 'disbursement.verified' | 'disbursement.rejected'; details: Record<string, unknown> },
): Promise<DisbursementRow> {
  return inTransaction(db, async (trx) => {
    const seen = await findAnyDisbursement(trx, id);
    if (!seen) throw notFound(`no disbursement ${id}`);
    // The account's lock before the row's, as approvals take them: verifying may place a hold.
    const account = await lockFinancialAccount(trx, seen.environment, seen.financial_account_id);
    const row = (await findAnyDisbursement(trx, id, true))!;
    if (row.status !== 'awaiting_verification')
      throw precondition(`The disbursement is ${row.status}; only an awaiting_verification one can be verified or rejected.`);
    const decided = await decide(trx, row, account);
    const { event: kind, details } = audit(decided);
    await recordAudit(trx, {
      event: kind,
      environment: row.environment,
      organizationId: row.organization_id,
      details: { disbursement_id: row.id, amount: centsOf(row.amount), ...details, via: 'admin_cli' },
    });
    return decided;
  });
}

/**
 * `admin disbursements verify` (docs/grantmaking.md, "Verification"): the operator verified the
 * recipient; `verified_at` is set and the balance step follows (`submitted` or `awaiting_balance`,
 * an auto-fund transfer when asked), audited, in one transaction.
 */
export function verifyDisbursement(db: Db, id: string): Promise<DisbursementRow> {
  return decideVerification(
    db,
    id,
    async (trx, row, account) => balanceStep(trx, await updateDisbursement(trx, row.id, { verified_at: new Date() }), account),
    (row) => ({ event: 'disbursement.verified', details: { status: row.status } }),
  );
}

/** `admin disbursements reject`: the operator refused the recipient; `rejected` with its reason, audited. No money had moved. */
export async function rejectDisbursement(db: Db, input: { id: string; reason: string }): Promise<DisbursementRow> {
  const reason = input.reason as RejectionReason;
  if (!REJECTION_REASONS.includes(reason)) throw invalid(`--reason: one of ${REJECTION_REASONS.join(', ')}`);
  return decideVerification(
    db,
    input.id,
    async (trx, row) => {
      const updated = await updateDisbursement(trx, row.id, { status: 'rejected', rejection_reason: reason, rejected_at: new Date() });
      await emitEvent(trx, disbursementEvent(updated, 'disbursement.updated'));
      return updated;
    },
    () => ({ event: 'disbursement.rejected', details: { reason } }),
  );
}
