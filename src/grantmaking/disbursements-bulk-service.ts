import type { Db } from '../db/database.js';
import { inTransaction } from '../db/executor.js';
import { DomainError, invalid, notFound } from '../errors/domain-error.js';
import type { Scope } from './accounts-repository.js';
import { refuseSelfApproval } from './approval-policy.js';
import { findDisbursements, lockFinancialAccount } from './disbursements-repository.js';
import { approveLockedRow } from './disbursement-verification-service.js';
import {
  createDisbursement,
  recordsOf,
  type CreateDisbursementInput,
  type DisbursementRecord,
  type DisbursementRow,
} from './disbursements-service.js';

/**
 * Disbursements in bulk (docs/grantmaking.md, "Disbursements"): created or approved all or none,
 * each item as one would be on its own (disbursements-service.ts).
 */

/** At most this many disbursements in one bulk request. */
export const MAX_BULK = 100;

/** A refusal of one item of a bulk request, naming the item. */
function itemError(error: unknown, name: string): unknown {
  return error instanceof DomainError ? new DomainError(error.code, `${name}: ${error.message}`, error.data) : error;
}

/** Creates them all or none (the published bulk create): a refusal names the item (`disbursements[i]`). */
export async function bulkCreateDisbursements(
  db: Db,
  scope: Scope,
  createdBy: string,
  inputs: readonly Omit<CreateDisbursementInput, 'idempotencyKey'>[],
): Promise<DisbursementRecord[]> {
  if (inputs.length === 0 || inputs.length > MAX_BULK) throw invalid(`disbursements: 1 to ${MAX_BULK} of them`);
  return inTransaction(db, async (trx) => {
    const created: DisbursementRecord[] = [];
    for (const [i, input] of inputs.entries()) {
      try {
        created.push(await createDisbursement(trx, scope, createdBy, input));
      } catch (error) {
        throw itemError(error, `disbursements[${i}]`);
      }
    }
    return created;
  });
}

/**
 * Approves them all or none (the published bulk approval). The accounts' locks first, then every
 * disbursement's (by id), all checked before any hold is placed: a concurrent completion or
 * failure of one of them never waits on this request's ledger rows while it waits on theirs.
 * They are decided oldest first, as approvals one by one would be.
 */
export async function bulkApproveDisbursements(
  db: Db,
  scope: Scope,
  approvedBy: string,
  ids: readonly string[],
): Promise<DisbursementRecord[]> {
  if (ids.length === 0 || ids.length > MAX_BULK) throw invalid(`disbursement_ids: 1 to ${MAX_BULK} of them`);
  const unique = [...new Set(ids)];
  if (unique.length !== ids.length) throw invalid('disbursement_ids: an id appears more than once');
  return inTransaction(db, async (trx) => {
    const seen = await findDisbursements(trx, scope, unique);
    const missing = unique.find((id) => !seen.some((r) => r.id === id));
    if (missing !== undefined) throw notFound(`The disbursement ${missing} was not found.`);
    const accounts = new Map<string, Awaited<ReturnType<typeof lockFinancialAccount>>>();
    for (const accountId of [...new Set(seen.map((r) => r.financial_account_id))].sort())
      accounts.set(accountId, await lockFinancialAccount(trx, scope.environment, accountId));
    const rows = await findDisbursements(trx, scope, unique, true);
    const blocked = rows.find((r) => r.status !== 'pending_approval');
    if (blocked) throw invalid(`disbursement_ids: ${blocked.id} is ${blocked.status}; only pending_approval ones can be approved.`);
    await refuseSelfApproval(trx, scope.organizationId, rows, approvedBy);
    const oldestFirst = [...rows].sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : 1));
    const approved: DisbursementRow[] = [];
    for (const row of oldestFirst) approved.push(await approveLockedRow(trx, row, accounts.get(row.financial_account_id)!, approvedBy));
    const records = await recordsOf(trx, approved);
    // In the order asked for.
    return ids.map((id) => records.find((r) => r.row.id === id)!);
  });
}
