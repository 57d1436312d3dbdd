import type { Db } from '../db/database.js';
import { inTransaction, type Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import type { GrantHistoryStatus } from '../db/schema-giving.js';
import { DomainError, invalid, notFound } from '../errors/domain-error.js';
import { recordAudit } from '../audit/audit-log.js';
import { checkEvidence } from '../grantmaking/evidence.js';
import { emitEvent } from '../webhooks/outbox.js';
import { moveGrantPayment } from './grant-money.js';
import {
  grantOfRequest,
  grantsAwaitingAccount,
  insertGrantStatus,
  lockGivingGrant,
  setGrantStatus,
  type GivingGrantRow,
} from './grants-repository.js';

/**
 * A captured grant's life after its capture (docs/giving.md, "A grant's life"): the fund
 * provider's decisions move it, each change with its status entry and its grant.updated event,
 * in the transaction of the decision; completion moves the money ("Money").
 */

const TERMINAL = new Set(['completed', 'canceled']);

async function moveGrant(
  trx: Executor,
  grant: GivingGrantRow,
  status: GrantHistoryStatus | 'completed',
  changes: { external_grant_id?: string | null; comment?: string | null } = {},
): Promise<GivingGrantRow> {
  const { comment = null, ...columns } = changes;
  const updated = await setGrantStatus(trx, grant.id, status, columns);
  // `completed` is a grant's status, never a history entry (the published GrantStatus list).
  if (status !== 'completed') await insertGrantStatus(trx, grant.id, status, comment);
  await emitEvent(trx, {
    environment: grant.environment,
    organizationId: grant.organization_id,
    category: 'grant.updated',
    objectId: grant.id,
    objectType: 'grant',
  });
  return updated;
}

/** The donor account was approved: its grants waiting for it are ready for the DAF to submit. */
export async function advanceGrantsOfApprovedAccount(trx: Executor, donorAccountId: string): Promise<void> {
  for (const grant of await grantsAwaitingAccount(trx, donorAccountId)) await moveGrant(trx, grant, 'awaiting_daf_submission');
}

/** The donor account was rejected: its grants waiting for it are canceled. */
export async function cancelGrantsOfRejectedAccount(trx: Executor, donorAccountId: string): Promise<void> {
  for (const grant of await grantsAwaitingAccount(trx, donorAccountId))
    await moveGrant(trx, grant, 'canceled', { comment: 'The donor account was not approved.' });
}

/** The fund provider submitted the grant request (initiated, with its id) or rejected it (canceled). */
export async function followGrantRequest(
  trx: Executor,
  grantRequestId: string,
  decision:
    { status: 'submitted'; externalGrantId: string | null; comment?: string | null } | { status: 'rejected'; reason?: string | null },
): Promise<void> {
  const grant = await grantOfRequest(trx, grantRequestId);
  if (!grant || TERMINAL.has(grant.status)) return;
  if (decision.status === 'submitted')
    await moveGrant(trx, grant, 'initiated', { external_grant_id: decision.externalGrantId, comment: decision.comment ?? null });
  else await moveGrant(trx, grant, 'canceled', { comment: decision.reason ?? null });
}

export type GrantOutcome = 'complete' | 'cancel';

/**
 * Completes or cancels one grant, in a transaction: the sandbox's simulations and production's
 * operator commands (with the bank's evidence). A terminal grant is refused (400); completing
 * moves the money once.
 */
export async function settleGrant(
  db: Db,
  scope: { environment: Environment; organizationId?: string },
  id: string,
  outcome: GrantOutcome,
  /** An operator's settlement in production: the bank's evidence, audited with the change. */
  evidence?: string,
): Promise<GivingGrantRow> {
  return inTransaction(db, async (trx) => {
    const grant = await lockGivingGrant(trx, id);
    if (!grant || grant.environment !== scope.environment || (scope.organizationId && grant.organization_id !== scope.organizationId))
      throw notFound('The grant was not found.');
    if (TERMINAL.has(grant.status)) throw invalid(`The grant is already ${grant.status}.`);
    const updated =
      outcome === 'cancel'
        ? await moveGrant(trx, grant, 'canceled', { comment: evidence ?? null })
        : await moveGrant(trx, grant, 'completed');
    if (outcome === 'complete') await moveGrantPayment(trx, updated);
    if (evidence !== undefined)
      await recordAudit(trx, {
        event: outcome === 'complete' ? 'grant.completed' : 'grant.canceled',
        environment: grant.environment,
        organizationId: grant.organization_id,
        details: { grant_id: grant.id, amount: Number(grant.amount), reference: evidence, via: 'admin_cli' },
      });
    return updated;
  });
}

/**
 * Production's rail (docs/giving.md, "A grant's life"): an operator, with the bank's evidence of
 * the DAF's payment (or of its cancellation), completes or cancels a production grant.
 */
export async function settleGrantAsOperator(
  db: Db,
  outcome: GrantOutcome,
  input: { id: string; reference: string },
): Promise<GivingGrantRow> {
  try {
    return await settleGrant(db, { environment: 'production' }, input.id, outcome, checkEvidence(input.reference));
  } catch (error) {
    if (error instanceof DomainError && error.code === 'not_found')
      throw notFound(`no production grant ${input.id} (a sandbox grant is settled by its simulations)`);
    throw error;
  }
}
