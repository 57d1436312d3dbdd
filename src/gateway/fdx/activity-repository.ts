import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { DepositTransactionType } from '../../db/schema-fdx.js';

/**
 * Statements and transactions, always of one account the caller was already found to own.
 * Lists are newest first and keyset-paged from the row the page key names.
 */

export interface StatementRow {
  id: string;
  account_id: string;
  period_start: string;
  period_end: string;
}

export interface Window {
  /** Inclusive. */
  from: Date;
  /** Exclusive. */
  until: Date;
}

const day = (date: Date) => date.toISOString().slice(0, 10);

function statementsIn(db: Db, accountId: string, window: Window) {
  // A statement is dated by the last day of its period.
  return db
    .selectFrom('deposit_statements')
    .where('account_id', '=', accountId)
    .where(sql<boolean>`period_end >= ${day(window.from)}::date and period_end < ${day(window.until)}::date`);
}

export function listStatements(
  db: Db,
  accountId: string,
  window: Window,
  startId: string | undefined,
  limit: number,
): Promise<StatementRow[]> {
  let query = statementsIn(db, accountId, window).select([
    'id',
    'account_id',
    sql<string>`period_start::text`.as('period_start'),
    sql<string>`period_end::text`.as('period_end'),
  ]);
  if (startId) query = query.where(sql<boolean>`(period_end, id) <= (select period_end, id from deposit_statements where id = ${startId})`);
  return query
    .orderBy('period_end', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
}

export async function countStatements(db: Db, accountId: string, window: Window): Promise<number> {
  const row = await statementsIn(db, accountId, window)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function statementBelongsTo(db: Db, accountId: string, id: string): Promise<boolean> {
  return !!(await db
    .selectFrom('deposit_statements')
    .select('id')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst());
}

export function findStatement(db: Db, accountId: string, id: string): Promise<StatementRow | undefined> {
  return db
    .selectFrom('deposit_statements')
    .select(['id', 'account_id', sql<string>`period_start::text`.as('period_start'), sql<string>`period_end::text`.as('period_end')])
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

export interface TransactionRow {
  id: string;
  account_id: string;
  transaction_timestamp: Date;
  posted_timestamp: Date | null;
  status: 'POSTED' | 'PENDING';
  debit_credit: 'DEBIT' | 'CREDIT';
  amount: string;
  transaction_type: DepositTransactionType;
  description: string;
  memo: string | null;
  reference: string;
  payee: string | null;
  check_number: number | null;
}

const TRANSACTION_COLUMNS = [
  'id',
  'account_id',
  'transaction_timestamp',
  'posted_timestamp',
  'status',
  'debit_credit',
  'amount',
  'transaction_type',
  'description',
  'memo',
  'reference',
  'payee',
  'check_number',
] as const;

function transactionsIn(db: Db, accountId: string, window: Window) {
  return db
    .selectFrom('deposit_transactions')
    .where('account_id', '=', accountId)
    .where('transaction_timestamp', '>=', window.from)
    .where('transaction_timestamp', '<', window.until);
}

/** Index deposit_transactions_page_idx: (account_id, transaction_timestamp, id). */
export function listTransactions(
  db: Db,
  accountId: string,
  window: Window,
  startId: string | undefined,
  limit: number,
): Promise<TransactionRow[]> {
  let query = transactionsIn(db, accountId, window).select(TRANSACTION_COLUMNS);
  if (startId)
    query = query.where(
      sql<boolean>`(transaction_timestamp, id) <= (select transaction_timestamp, id from deposit_transactions where id = ${startId})`,
    );
  return query
    .orderBy('transaction_timestamp', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
}

export async function countTransactions(db: Db, accountId: string, window: Window): Promise<number> {
  const row = await transactionsIn(db, accountId, window)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function transactionBelongsTo(db: Db, accountId: string, id: string): Promise<boolean> {
  return !!(await db
    .selectFrom('deposit_transactions')
    .select('id')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst());
}

export interface PeriodTotals {
  /** Signed sum of everything posted before the period. */
  before: number;
  credits: number;
  creditCount: number;
  debits: number;
  debitCount: number;
}

/** What a statement needs besides its lines, in one pass over index deposit_transactions_posted_idx. */
export async function periodTotals(db: Db, accountId: string, period: Window): Promise<PeriodTotals> {
  const row = await db
    .selectFrom('deposit_transactions')
    .select([
      sql<string>`coalesce(sum(case when posted_timestamp < ${period.from} then case debit_credit when 'CREDIT' then amount else -amount end end), 0)`.as(
        'before',
      ),
      sql<string>`coalesce(sum(amount) filter (where posted_timestamp >= ${period.from} and debit_credit = 'CREDIT'), 0)`.as('credits'),
      sql<string>`count(*) filter (where posted_timestamp >= ${period.from} and debit_credit = 'CREDIT')`.as('credit_count'),
      sql<string>`coalesce(sum(amount) filter (where posted_timestamp >= ${period.from} and debit_credit = 'DEBIT'), 0)`.as('debits'),
      sql<string>`count(*) filter (where posted_timestamp >= ${period.from} and debit_credit = 'DEBIT')`.as('debit_count'),
    ])
    .where('account_id', '=', accountId)
    .where('status', '=', 'POSTED')
    .where('posted_timestamp', '<', period.until)
    .executeTakeFirstOrThrow();
  return {
    before: Number(row.before),
    credits: Number(row.credits),
    creditCount: Number(row.credit_count),
    debits: Number(row.debits),
    debitCount: Number(row.debit_count),
  };
}

/** One batch of a period's posted transactions in posting order, after the row `afterId` names. */
export function postedBatch(
  db: Db,
  accountId: string,
  period: Window,
  afterId: string | undefined,
  size: number,
): Promise<TransactionRow[]> {
  let query = db
    .selectFrom('deposit_transactions')
    .select(TRANSACTION_COLUMNS)
    .where('account_id', '=', accountId)
    .where('status', '=', 'POSTED')
    .where('posted_timestamp', '>=', period.from)
    .where('posted_timestamp', '<', period.until);
  if (afterId)
    query = query.where(
      sql<boolean>`(posted_timestamp, id) > (select posted_timestamp, id from deposit_transactions where id = ${afterId})`,
    );
  return query.orderBy('posted_timestamp').orderBy('id').limit(size).execute();
}
