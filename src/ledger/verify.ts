import type { Db } from '../db/database.js';
import type { Executor, Trx } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import { checkEnvironment } from './ledger.js';
import * as repo from './verification-repository.js';

/** What `admin ledger verify` reports of a broken ledger: the first account found, and why. */
export interface LedgerProblem {
  /** The account broken, or the first account of a broken transfer (null when it has none). */
  accountId: string | null;
  purpose: string | null;
  organizationId: string | null;
  /** Null for the whole ledger's sum when no environment was asked for. */
  environment: Environment | null;
  transferId: string | null;
  reason: string;
}

export interface LedgerCounts {
  accounts: number;
  transfers: number;
  entries: number;
}

export type LedgerVerification = (LedgerCounts & { ok: true; sum: 0 }) | (LedgerCounts & { ok: false; problem: LedgerProblem });

async function accountDetails(db: Executor, id: string | null) {
  const account = id === null ? undefined : await repo.ledgerAccountOf(db, id);
  return { purpose: account?.purpose ?? null, organizationId: account?.organization_id ?? null };
}

/**
 * Proves the ledger's invariants on a live database (docs/ledger.md, "Verification"), in
 * this order: every account's stored balance is the sum of its entries and a floored one is not
 * below zero; every transfer has at least two entries summing to zero; every entry's transfer
 * and account exist in its environment; the whole ledger (of one environment when given) sums
 * to zero. Given the database, it reads one snapshot (a repeatable-read, read-only transaction),
 * so a posting committed while it runs is seen by every query or by none.
 */
export async function verifyLedger(db: Db | Trx, options: { environment?: Environment } = {}): Promise<LedgerVerification> {
  const environment = options.environment;
  if (environment !== undefined) checkEnvironment(environment);
  return repo.inSnapshot(db, (trx) => verifyIn(trx, environment));
}

async function verifyIn(db: Executor, environment: Environment | undefined): Promise<LedgerVerification> {
  const totals = await repo.ledgerCounts(db, environment);
  const counts: LedgerCounts = {
    accounts: Number(totals.accounts),
    transfers: Number(totals.transfers),
    entries: Number(totals.entries),
  };
  const broken = (problem: LedgerProblem): LedgerVerification => ({ ok: false, ...counts, problem });

  const account = await repo.firstBrokenAccount(db, environment);
  if (account) {
    const mismatch = account.balance !== account.entries_total;
    return broken({
      accountId: account.id,
      purpose: account.purpose,
      organizationId: account.organization_id,
      environment: account.environment,
      transferId: null,
      reason: mismatch
        ? `stored balance ${account.balance} is not the sum of its entries, ${account.entries_total}`
        : `balance ${account.balance} is below zero, and the account may not go negative`,
    });
  }

  const transfer = await repo.firstUnbalancedTransfer(db, environment);
  if (transfer) {
    return broken({
      accountId: transfer.account_id,
      ...(await accountDetails(db, transfer.account_id)),
      environment: transfer.environment,
      transferId: transfer.id,
      reason: `transfer ${transfer.id} (${transfer.kind} of ${transfer.reference_type} ${transfer.reference_id}) has ${transfer.legs} entries summing to ${transfer.total}`,
    });
  }

  const stray = await repo.firstStrayEntry(db, environment);
  if (stray) {
    return broken({
      accountId: stray.account_id,
      ...(await accountDetails(db, stray.account_id)),
      environment: stray.environment,
      transferId: stray.transfer_id,
      reason: `entry ${stray.id} has no transfer ${stray.transfer_id} or no account ${stray.account_id} in ${stray.environment}`,
    });
  }

  if (totals.entries_total !== '0' || totals.balances_total !== '0') {
    return broken({
      accountId: null,
      purpose: null,
      organizationId: null,
      environment: environment ?? null,
      transferId: null,
      reason: `the ledger sums to ${totals.entries_total} (entries) and ${totals.balances_total} (balances), not 0`,
    });
  }
  return { ok: true, ...counts, sum: 0 };
}
