import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import { openLedgerAccount } from '../ledger/ledger.js';
import { findPlatformAccount, insertPlatformAccount, lockPlatformAccounts, type PlatformPurpose } from './accounts-repository.js';

/**
 * The environment's `external` ledger account: the outside world that inbound transfers come
 * from (docs/ledger.md, "Accounts and purposes"; it may go negative). Opened the first time it is
 * needed, in the caller's transaction, under an advisory lock so two first callers open one.
 */
export function externalLedgerAccount(trx: Executor, environment: Environment): Promise<string> {
  return platformLedgerAccount(trx, environment, 'external');
}

/**
 * The environment's `dafpay_network` account: where a completed grant's money for a nonprofit not
 * on Almoner goes, for the DAFpay Network to pass on (docs/ledger.md, "Accounts and purposes"). A
 * clearing account, floored at zero: money only arrives in it here.
 */
export function dafpayNetworkLedgerAccount(trx: Executor, environment: Environment): Promise<string> {
  return platformLedgerAccount(trx, environment, 'dafpay_network');
}

async function platformLedgerAccount(trx: Executor, environment: Environment, purpose: PlatformPurpose): Promise<string> {
  const known = await findPlatformAccount(trx, environment, purpose);
  if (known) return known;
  await lockPlatformAccounts(trx, environment);
  // Read again under the lock: a concurrent opener may have committed it meanwhile.
  const committed = await findPlatformAccount(trx, environment, purpose);
  if (committed) return committed;
  const account = await openLedgerAccount(trx, { environment, purpose: purpose === 'external' ? 'external' : 'clearing' });
  await insertPlatformAccount(trx, { environment, purpose, ledger_account_id: account.id });
  return account.id;
}
