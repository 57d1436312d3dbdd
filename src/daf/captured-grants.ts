import type { Executor } from '../db/executor.js';
import type { GrantHistoryStatus } from '../db/schema-giving.js';
import { emitEvent } from '../webhooks/outbox.js';
import {
  grantOfRequest,
  grantsAwaitingAccount,
  insertGrantStatus,
  setGrantStatus,
  type CapturedGrantRow,
} from './captured-grants-repository.js';

/**
 * What a fund provider's decisions do to the DAFpay grants captured at it (docs/giving.md, "A
 * grant's life"): each change with its status entry and its grant.updated event, in the
 * transaction of the decision. src/giving/ settles grants through moveGrant too.
 */

export type { CapturedGrantRow };

/** A completed or canceled grant moves no more. */
export const TERMINAL_GRANT_STATUSES: ReadonlySet<string> = new Set(['completed', 'canceled']);

/** Moves a grant to a status, with its history entry and its grant.updated event for the connect's owner. */
export async function moveGrant(
  trx: Executor,
  grant: CapturedGrantRow,
  status: GrantHistoryStatus | 'completed',
  changes: { external_grant_id?: string | null; comment?: string | null } = {},
): Promise<CapturedGrantRow> {
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
  if (!grant || TERMINAL_GRANT_STATUSES.has(grant.status)) return;
  if (decision.status === 'submitted')
    await moveGrant(trx, grant, 'initiated', { external_grant_id: decision.externalGrantId, comment: decision.comment ?? null });
  else await moveGrant(trx, grant, 'canceled', { comment: decision.reason ?? null });
}
