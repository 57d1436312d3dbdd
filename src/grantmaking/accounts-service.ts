import type { Db } from '../db/database.js';
import type { Cursor } from '../db/keyset.js';
import { financialAccountBalance } from '../ledger/ledger.js';
import { findFinancialAccount, findProgram, listFinancialAccounts, listPrograms, type Scope } from './accounts-repository.js';

export type { Scope };
export type FinancialAccountRow = Awaited<ReturnType<typeof listFinancialAccounts>>[number];
export type ProgramRow = Awaited<ReturnType<typeof listPrograms>>[number];

/** The grantmaker's financial accounts in the caller's environment. */
export function financialAccountsOf(db: Db, scope: Scope): Promise<FinancialAccountRow[]> {
  return listFinancialAccounts(db, scope);
}

/** One of the grantmaker's financial accounts, or undefined (another's, or another environment's). */
export function financialAccountOf(db: Db, scope: Scope, id: string): Promise<FinancialAccountRow | undefined> {
  return findFinancialAccount(db, scope, id);
}

/**
 * The account's balances from the ledger (docs/ledger.md, "Financial accounts"), both ledger
 * accounts read by one statement (one snapshot), or undefined when the account is not the caller's.
 */
export async function financialAccountBalanceOf(
  db: Db,
  scope: Scope,
  id: string,
): Promise<{ current_balance: number; available_balance: number; timestamp: Date } | undefined> {
  const account = await findFinancialAccount(db, scope, id);
  if (!account) return undefined;
  const balance = await financialAccountBalance(db, {
    availableAccountId: account.available_ledger_account_id,
    heldAccountId: account.held_ledger_account_id,
  });
  return { ...balance, timestamp: new Date() };
}

export function programsPage(db: Db, scope: Scope, cursor: Cursor | undefined, limit: number): Promise<ProgramRow[]> {
  return listPrograms(db, scope, cursor, limit);
}

export function programOf(db: Db, scope: Scope, id: string): Promise<ProgramRow | undefined> {
  return findProgram(db, scope, id);
}
