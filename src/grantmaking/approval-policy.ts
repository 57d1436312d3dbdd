import type { Executor } from '../db/executor.js';
import { forbidden } from '../errors/domain-error.js';
import { emailsOfUsers, requiresSecondApprover } from './approval-policy-repository.js';

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

const USER_ID = /^user:([0-9a-f-]{36})$/;

/**
 * The e-mail address of each `user:<id>` approver of `rows`, keyed by that actor: the published
 * `approval.approved_by` is "the email address of that user" when a user approved (an API key's
 * approval has none to show).
 */
export async function approverEmails(db: Executor, rows: readonly { approved_by: string | null }[]): Promise<Map<string, string>> {
  const ids = [...new Set(rows.map((r) => USER_ID.exec(r.approved_by ?? '')?.[1]).filter((id): id is string => id !== undefined))];
  return new Map((await emailsOfUsers(db, ids)).map((u) => [`user:${u.id}`, u.email]));
}
