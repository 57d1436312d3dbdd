import type { Executor } from '../db/executor.js';
import { forbidden } from '../errors/domain-error.js';
import { requiresSecondApprover } from './approval-policy-repository.js';

/**
 * Who may approve a disbursement (docs/grantmaking.md, "Approvals by another person"): when the
 * grantmaker requires a second person, not whoever created it. Creator and approver are the
 * actors the rows record (`api_key:<id>`, `user:<id>`, `client:<id>`), so an API key that
 * created one may not approve it, nor may the user who created it in the dashboard. Called by
 * every approval, one or in bulk, under the rows' locks; the published operations document 403.
 */
export async function refuseSelfApproval(
  trx: Executor,
  organizationId: string,
  rows: readonly { id: string; created_by: string }[],
  approvedBy: string,
): Promise<void> {
  const own = rows.find((row) => row.created_by === approvedBy);
  if (!own || !(await requiresSecondApprover(trx, organizationId))) return;
  throw forbidden(
    `The disbursement ${own.id} was created by ${actorWords(approvedBy)}; your organization requires a different person or API key to approve it.`,
    { title: 'A different person or API key must approve' },
  );
}

function actorWords(actor: string): string {
  if (actor.startsWith('api_key:')) return 'this same API key';
  if (actor.startsWith('user:')) return 'you';
  return 'this same application';
}
