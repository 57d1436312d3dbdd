import { recordAudit } from '../audit/audit-log.js';
import type { Db } from '../db/database.js';
import { inTransaction } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import type { StopReason } from '../db/schema-grantmaking.js';
import { DomainError, notFound, precondition } from '../errors/domain-error.js';
import { releaseHold } from '../ledger/holds.js';
import { centsOf } from '../ledger/ledger.js';
import { emitEvent } from '../webhooks/outbox.js';
import type { Scope } from './accounts-repository.js';
import { latestTransfer, updateTransfer } from './disbursement-transfers-repository.js';
import { findDisbursement, lockFinancialAccount, updateDisbursement, validatingOfRecipient } from './disbursements-repository.js';
import { submitAwaitingBalance, submitWithHold } from './disbursement-funding-service.js';
import type { DisbursementRow } from './disbursements-service.js';
import { checkEvidence } from './evidence.js';

/**
 * A submitted check stopped, and a returned check retried (docs/grantmaking.md, "Stopping a
 * check" and "Returned checks"): each a status change with its transfer, its hold and
 * `disbursement.updated` in one transaction, as disbursements-service.ts changes them.
 */

function updatedEvent(row: DisbursementRow) {
  return {
    environment: row.environment,
    organizationId: row.organization_id,
    category: 'disbursement.updated',
    objectId: row.id,
    objectType: 'disbursement',
  } as const;
}

const PAID_BY = { check: 'a check', ach: 'an ACH credit', account: 'an account transfer' } as const;

/**
 * Stops a mailed check not yet deposited: the transfer and the disbursement become `stopped`, the
 * hold is released once, then the freed money submits what waits for it, as after a failure.
 * Anything else is `412` naming why (the published operation's requirements).
 */
export async function stopDisbursement(db: Db, scope: Scope, stoppedBy: string, id: string, reason: StopReason): Promise<DisbursementRow> {
  const stopped = await inTransaction(db, async (trx) => {
    const row = await findDisbursement(trx, scope, id, true);
    if (!row) throw notFound('The disbursement was not found.');
    const transfer = await latestTransfer(trx, row.id);
    if (transfer?.rail === 'check' && transfer.status === 'deposited')
      throw precondition('The check was already deposited; its payment cannot be stopped.');
    if (row.status !== 'submitted') throw precondition(`The disbursement is ${row.status}; only a submitted one can be stopped.`);
    if (transfer?.rail !== 'check' || transfer.status !== 'issued')
      throw precondition(
        `The disbursement is not paid by a mailed check${transfer ? ` but by ${PAID_BY[transfer.rail]}` : ''}; only a check can be stopped.`,
      );
    const now = new Date();
    await updateTransfer(trx, transfer.id, { status: 'stopped', stopped_at: now, stop_reason: reason });
    await releaseHold(trx, { environment: row.environment, reference: { type: 'disbursement', id: row.id } });
    const updated = await updateDisbursement(trx, row.id, { status: 'stopped', stopped_by: stoppedBy, stopped_at: now });
    await emitEvent(trx, updatedEvent(updated));
    return updated;
  });
  await submitAwaitingBalance(db, stopped.environment, stopped.financial_account_id);
  return stopped;
}

/** `validating_organization` → `submitted` with a new transfer, its hold kept, under the account's lock then the row's. */
async function resubmit(db: Db, where: { environment: Environment; organizationId?: string }, id: string, audit?: { reference: string }) {
  return inTransaction(db, async (trx) => {
    const seen = await findDisbursement(trx, where, id);
    if (!seen) throw notFound('The disbursement was not found.');
    const account = await lockFinancialAccount(trx, seen.environment, seen.financial_account_id);
    const row = (await findDisbursement(trx, where, id, true))!;
    if (row.status !== 'validating_organization')
      throw precondition(`The disbursement is ${row.status}; only a validating_organization one can be resubmitted.`);
    const updated = await submitWithHold(trx, row, account);
    if (audit)
      await recordAudit(trx, {
        event: 'disbursement.resubmitted',
        environment: row.environment,
        organizationId: row.organization_id,
        details: {
          disbursement_id: row.id,
          amount: centsOf(row.amount),
          reference: audit.reference,
          transfer_id: (await latestTransfer(trx, row.id))!.id,
          via: 'admin_cli',
        },
      });
    return updated;
  });
}

/**
 * The operator's retry of a production disbursement held in `validating_organization` (a returned
 * check, or a check with no mailing address), once the recipient's information is resolved:
 * audited with why (`admin disbursements resubmit`).
 */
export async function resubmitDisbursementAsOperator(db: Db, input: { id: string; reference: string }): Promise<DisbursementRow> {
  const reference = checkEvidence(input.reference);
  try {
    return await resubmit(db, { environment: 'production' }, input.id, { reference });
  } catch (error) {
    if (error instanceof DomainError && error.code === 'not_found')
      throw notFound(`no production disbursement ${input.id} (a sandbox one is resubmitted by onboarding its recipient)`);
    throw error;
  }
}

/**
 * After a sandbox recipient is onboarded onto an electronic rail, its `validating_organization`
 * disbursements (every grantmaker's) are resubmitted on that rail, each in a transaction of its
 * own, right after the onboarding's. One changed meanwhile is left as it is.
 */
export async function resubmitOnboardedRecipient(db: Db, environment: Environment, recipientOrganizationId: string): Promise<string[]> {
  const resubmitted: string[] = [];
  for (const { id, organization_id } of await validatingOfRecipient(db, environment, recipientOrganizationId)) {
    try {
      resubmitted.push((await resubmit(db, { environment, organizationId: organization_id }, id)).id);
    } catch (error) {
      if (!(error instanceof DomainError && error.code === 'precondition')) throw error;
    }
  }
  return resubmitted;
}
