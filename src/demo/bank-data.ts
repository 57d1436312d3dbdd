import crypto from 'node:crypto';
import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import type { DepositTransactionType } from '../db/schema-fdx.js';
import { insertDepositAccount, insertDepositStatements, insertDepositTransactions } from './seed-repository.js';

/**
 * Bank data for the FDX API, for demos, tests and benchmarks: deposit accounts opened on the
 * first day of the month 24 months ago, one statement per completed month, and transactions
 * spread evenly from the opening to now (the last two days still pending). Rows are built and
 * inserted in batches, so memory stays flat and thousands of rows take a fraction of a second.
 */
export interface BankDataOptions {
  organizationId: string;
  environment: Environment;
  accounts?: number;
  /** Per account. */
  transactionsPerAccount?: number;
  now?: Date;
}

export interface SeededBankIds {
  account_ids: string[];
  statement_ids: string[];
}

export const HISTORY_MONTHS = 24;
const BATCH = 1000;
const PENDING_MS = 2 * 86_400_000;
const NICKNAMES = ['Operating', 'Payroll', 'Reserve', 'Programs', 'Capital campaign'];

interface Kind {
  type: DepositTransactionType;
  description: () => string;
  payee?: () => string;
  cents: [number, number];
}
const pick = <T>(list: readonly T[]): T => list[crypto.randomInt(list.length)]!;
const CREDITS: readonly Kind[] = [
  { type: 'DEPOSIT', description: () => 'Mobile check deposit', cents: [2_500, 250_000] },
  {
    type: 'DIRECTDEPOSIT',
    description: () => `Stripe payout ST-${crypto.randomBytes(4).toString('hex').toUpperCase()}`,
    cents: [10_000, 400_000],
  },
  {
    type: 'TRANSFER',
    description: () =>
      `DAF grant - ${pick(['Fidelity Charitable', 'Schwab Charitable', 'Vanguard Charitable', 'National Philanthropic Trust'])}`,
    cents: [50_000, 500_000],
  },
  { type: 'PREAUTHORIZEDDEPOSIT', description: () => 'Monthly donors - PayPal Giving Fund', cents: [5_000, 150_000] },
  { type: 'INTEREST', description: () => 'Interest earned', cents: [100, 5_000] },
];
const DEBITS: readonly Kind[] = [
  {
    type: 'CHECK',
    description: () => 'Check paid',
    payee: () => pick(['Harvest Farms Co-op', 'Valley Produce, Inc.', 'Springfield Dairy']),
    cents: [5_000, 250_000],
  },
  {
    type: 'BILLPAYMENT',
    description: () => 'Springfield Electric & Gas',
    payee: () => 'Springfield Electric & Gas',
    cents: [20_000, 90_000],
  },
  { type: 'TRANSFER', description: () => 'Payroll - Gusto', payee: () => 'Gusto', cents: [100_000, 300_000] },
  { type: 'FEE', description: () => 'Monthly service fee', cents: [1_500, 1_500] },
  {
    type: 'PREAUTHORIZEDWITHDRAWAL',
    description: () => 'Insurance premium - Acme Mutual',
    payee: () => 'Acme Mutual',
    cents: [30_000, 60_000],
  },
  { type: 'POSDEBIT', description: () => 'Card purchase - Restaurant Depot', payee: () => 'Restaurant Depot', cents: [1_000, 80_000] },
];

const digits = (n: number) => Array.from({ length: n }, () => crypto.randomInt(10)).join('');

/** A nine-digit routing number with a valid ABA check digit (3-7-1 weights). */
export function routingNumber(): string {
  const first = `0${crypto.randomInt(1, 10)}${digits(6)}`;
  const w = [3, 7, 1, 3, 7, 1, 3, 7];
  const sum = [...first].reduce((s, d, i) => s + Number(d) * w[i]!, 0);
  return `${first}${(10 - (sum % 10)) % 10}`;
}

const isoDay = (date: Date) => date.toISOString().slice(0, 10);

/** The first day of each of the completed months in the history, oldest first. */
export function statementPeriods(now: Date, months = HISTORY_MONTHS): { start: string; end: string }[] {
  return Array.from({ length: months }, (_, i) => {
    const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - months + i, 1));
    const end = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 0));
    return { start: isoDay(start), end: isoDay(end) };
  });
}

function transaction(accountId: string, openedAt: number, now: number, checkNumber: () => number) {
  // Slightly more money in than out over time, as for a healthy food bank.
  const credit = crypto.randomInt(100) < 45;
  const kind = pick(credit ? CREDITS : DEBITS);
  const at = new Date(openedAt + crypto.randomInt(Math.max(1, now - openedAt)));
  const posted = new Date(at.getTime() + crypto.randomInt(36 * 3_600_000));
  const pending = at.getTime() > now - PENDING_MS || posted.getTime() > now;
  const cents = kind.cents[0] === kind.cents[1] ? kind.cents[0] : crypto.randomInt(kind.cents[0], kind.cents[1]);
  const check = kind.type === 'CHECK' ? checkNumber() : null;
  return {
    id: crypto.randomUUID(),
    account_id: accountId,
    transaction_timestamp: at,
    posted_timestamp: pending ? null : posted,
    status: pending ? ('PENDING' as const) : ('POSTED' as const),
    debit_credit: credit ? ('CREDIT' as const) : ('DEBIT' as const),
    amount: cents,
    transaction_type: kind.type,
    description: check ? `Check ${check} - ${kind.payee!()}` : kind.description(),
    memo: null,
    reference: `${kind.type.slice(0, 3)}${digits(9)}`,
    payee: check ? null : (kind.payee?.() ?? null),
    check_number: check,
  };
}

/** Inserts through the caller's executor: pass a transaction to make it all-or-nothing. */
export async function seedBankData(db: Executor, options: BankDataOptions): Promise<SeededBankIds> {
  const now = options.now ?? new Date();
  const periods = statementPeriods(now);
  const openedOn = periods[0]!.start;
  const openedAt = new Date(`${openedOn}T00:00:00Z`).getTime();
  const ids: SeededBankIds = { account_ids: [], statement_ids: [] };
  const routing = routingNumber();
  const count = options.accounts ?? 2;
  for (let a = 0; a < count; a += 1) {
    const accountId = crypto.randomUUID();
    await insertDepositAccount(db, {
      id: accountId,
      environment: options.environment,
      organization_id: options.organizationId,
      account_number: `${crypto.randomInt(1, 10)}${digits(9)}`,
      routing_transit_number: routing,
      product_name: 'Nonprofit Checking',
      nickname: NICKNAMES[a % NICKNAMES.length]!,
      opened_on: openedOn,
      opening_balance: crypto.randomInt(10_000, 50_000) * 100,
      // A millisecond apart, so lists (by created_at) show them in the order made: Operating first.
      created_at: new Date(Date.now() - (count - a)),
    });
    const statements = periods.map((p) => ({ id: crypto.randomUUID(), account_id: accountId, period_start: p.start, period_end: p.end }));
    await insertDepositStatements(db, statements);
    let nextCheck = 1001;
    const total = options.transactionsPerAccount ?? 500;
    for (let done = 0; done < total; done += BATCH) {
      const rows = Array.from({ length: Math.min(BATCH, total - done) }, () =>
        transaction(accountId, openedAt, now.getTime(), () => nextCheck++),
      );
      await insertDepositTransactions(db, rows);
    }
    ids.account_ids.push(accountId);
    ids.statement_ids.push(...statements.map((s) => s.id));
  }
  return ids;
}
