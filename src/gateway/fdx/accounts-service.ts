import type { Db } from '../../db/database.js';
import {
  accountActivityTotals,
  countAccounts,
  findAccount,
  findOrganization,
  listAccounts,
  type AccountRow,
  type OrganizationRow,
  type Scope,
} from './accounts-repository.js';

/** The authorizing organization (the FDX customer), or undefined. */
export function organizationOf(db: Db, organizationId: string): Promise<OrganizationRow | undefined> {
  return findOrganization(db, organizationId);
}

/** Whether an account is the caller's (a page key naming another is refused). */
export async function isCallersAccount(db: Db, scope: Scope, id: string): Promise<boolean> {
  return !!(await findAccount(db, scope, id));
}

/** A page of the caller's deposit accounts from `startId`, with how many it has in all. */
export async function accountsPage(
  db: Db,
  scope: Scope,
  startId: string | undefined,
  limit: number,
): Promise<{ rows: AccountRow[]; total: number }> {
  const [rows, total] = await Promise.all([listAccounts(db, scope, startId, limit), countAccounts(db, scope)]);
  return { rows, total };
}

/** An account's posted balance and pending debits, from its transactions. */
export function accountTotals(db: Db, accountId: string): Promise<{ posted: number; pendingDebits: number }> {
  return accountActivityTotals(db, accountId);
}
