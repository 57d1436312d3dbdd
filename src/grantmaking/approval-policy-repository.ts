import type { Executor } from '../db/executor.js';

/**
 * The grantmaker's "disbursements need a second person to approve" (docs/grantmaking.md,
 * "Approvals by another person"). Read here rather than through src/accounts, which provisions
 * grantmakers through this folder: the folders import one another one way only.
 */
export async function requiresSecondApprover(db: Executor, organizationId: string): Promise<boolean> {
  const row = await db.selectFrom('organizations').select('require_second_approver').where('id', '=', organizationId).executeTakeFirst();
  return row?.require_second_approver ?? false;
}
