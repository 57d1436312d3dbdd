import type { Db } from '../../db/database.js';
import type { AccountRow, OrganizationRow } from './accounts-repository.js';
import { periodTotals, postedBatch, type StatementRow, type TransactionRow, type Window } from './activity-repository.js';

/**
 * Everything a statement file shows, generated from the stored transactions: the period's
 * posted transactions (by posting time) and the balances that follow from them. Lines are
 * read in batches while the file streams, so a month of any size needs little memory.
 */
export interface StatementContent {
  organization: OrganizationRow;
  account: AccountRow;
  statement: StatementRow;
  period: Window;
  /** Cents. */
  openingBalance: number;
  closingBalance: number;
  credits: number;
  creditCount: number;
  debits: number;
  debitCount: number;
  lines(): AsyncGenerator<TransactionRow>;
}

const DAY_MS = 86_400_000;
export const BATCH_SIZE = 1000;

export async function loadStatementContent(
  db: Db,
  organization: OrganizationRow,
  account: AccountRow,
  statement: StatementRow,
): Promise<StatementContent> {
  const period = {
    from: new Date(`${statement.period_start}T00:00:00Z`),
    until: new Date(new Date(`${statement.period_end}T00:00:00Z`).getTime() + DAY_MS),
  };
  const totals = await periodTotals(db, account.id, period);
  const openingBalance = Number(account.opening_balance) + totals.before;
  return {
    organization,
    account,
    statement,
    period,
    openingBalance,
    closingBalance: openingBalance + totals.credits - totals.debits,
    credits: totals.credits,
    creditCount: totals.creditCount,
    debits: totals.debits,
    debitCount: totals.debitCount,
    async *lines() {
      let after: string | undefined;
      for (;;) {
        const batch = await postedBatch(db, account.id, period, after, BATCH_SIZE);
        yield* batch;
        if (batch.length < BATCH_SIZE) return;
        after = batch[batch.length - 1]!.id;
      }
    },
  };
}

/** Signed cents of a transaction: credits add, debits subtract. */
export const signed = (row: TransactionRow) => (row.debit_credit === 'CREDIT' ? Number(row.amount) : -Number(row.amount));

/** 123456 → "1,234.56", -5 → "-0.05". */
export function formatDollars(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const whole = Math.floor(abs / 100).toLocaleString('en-US');
  return `${sign}${whole}.${String(abs % 100).padStart(2, '0')}`;
}

/** Plain decimal for machines: 123456 → "1234.56". */
export function decimalDollars(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}
