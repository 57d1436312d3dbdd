import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import { openLedgerAccount } from '../ledger/ledger.js';
import { findPlatformAccount, insertPlatformAccount, lockPlatformAccounts } from './accounts-repository.js';

/**
 * The environment's `external` ledger account: the outside world that inbound transfers come
 * from (docs/ledger.md, "Accounts and purposes"; it may go negative). Opened the first time it is
 * needed, in the caller's transaction, under an advisory lock so two first callers open one.
 */
export async function externalLedgerAccount(trx: Executor, environment: Environment): Promise<string> {
  const known = await findPlatformAccount(trx, environment, 'external');
  if (known) return known;
  await lockPlatformAccounts(trx, environment);
  // Read again under the lock: a concurrent opener may have committed it meanwhile.
  const committed = await findPlatformAccount(trx, environment, 'external');
  if (committed) return committed;
  const account = await openLedgerAccount(trx, { environment, purpose: 'external' });
  await insertPlatformAccount(trx, { environment, purpose: 'external', ledger_account_id: account.id });
  return account.id;
}
