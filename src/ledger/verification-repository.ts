import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { Executor, Trx } from '../db/executor.js';
import type { Environment } from '../db/schema.js';

/**
 * The queries of `verifyLedger` (docs/ledger.md, "Verification"): each finds the first row, by
 * id, that breaks one invariant. Sums are numeric in SQL and text here, so no total overflows.
 */

const inEnvironment = (column: string, environment: Environment | undefined) =>
  environment ? sql`${sql.ref(column)} = ${environment}` : sql`true`;

export async function ledgerCounts(db: Executor, environment: Environment | undefined) {
  const { rows } = await sql<{ accounts: string; transfers: string; entries: string; entries_total: string; balances_total: string }>`
    select
      (select count(*) from ledger_accounts a where ${inEnvironment('a.environment', environment)}) as accounts,
      (select count(*) from ledger_transfers t where ${inEnvironment('t.environment', environment)}) as transfers,
      (select count(*) from ledger_entries e where ${inEnvironment('e.environment', environment)}) as entries,
      (select coalesce(sum(e.amount), 0)::text from ledger_entries e where ${inEnvironment('e.environment', environment)}) as entries_total,
      (select coalesce(sum(a.balance), 0)::text from ledger_accounts a where ${inEnvironment('a.environment', environment)}) as balances_total`.execute(
    db,
  );
  return rows[0]!;
}

/** The first account whose stored balance is not the sum of its entries, or that is floored and below zero. */
export async function firstBrokenAccount(db: Executor, environment: Environment | undefined) {
  const { rows } = await sql<{
    id: string;
    environment: Environment;
    organization_id: string | null;
    purpose: string;
    may_go_negative: boolean;
    balance: string;
    entries_total: string;
  }>`
    select a.id, a.environment, a.organization_id, a.purpose, a.may_go_negative, a.balance::text as balance,
           coalesce(s.total, 0)::text as entries_total
    from ledger_accounts a
    left join (select account_id, sum(amount) as total from ledger_entries group by account_id) s on s.account_id = a.id
    where ${inEnvironment('a.environment', environment)}
      and (a.balance <> coalesce(s.total, 0) or (not a.may_go_negative and a.balance < 0))
    order by a.id
    limit 1`.execute(db);
  return rows[0];
}

/** The first transfer with fewer than two entries or whose entries do not sum to zero, with its first account. */
export async function firstUnbalancedTransfer(db: Executor, environment: Environment | undefined) {
  const { rows } = await sql<{
    id: string;
    environment: Environment;
    kind: string;
    reference_type: string;
    reference_id: string;
    legs: string;
    total: string;
    account_id: string | null;
  }>`
    select t.id, t.environment, t.kind, t.reference_type, t.reference_id, count(e.id)::text as legs,
           coalesce(sum(e.amount), 0)::text as total, min(e.account_id) as account_id
    from ledger_transfers t
    left join ledger_entries e on e.transfer_id = t.id
    where ${inEnvironment('t.environment', environment)}
    group by t.id
    having count(e.id) < 2 or coalesce(sum(e.amount), 0) <> 0
    order by t.id
    limit 1`.execute(db);
  return rows[0];
}

/** The first entry whose transfer or account is missing, or in another environment than the entry. */
export async function firstStrayEntry(db: Executor, environment: Environment | undefined) {
  const { rows } = await sql<{ id: string; transfer_id: string; account_id: string; environment: Environment }>`
    select e.id, e.transfer_id, e.account_id, e.environment
    from ledger_entries e
    left join ledger_transfers t on t.id = e.transfer_id and t.environment = e.environment
    left join ledger_accounts a on a.id = e.account_id and a.environment = e.environment
    where ${inEnvironment('e.environment', environment)} and (t.id is null or a.id is null)
    order by e.id
    limit 1`.execute(db);
  return rows[0];
}

export function ledgerAccountOf(db: Executor, id: string) {
  return db
    .selectFrom('ledger_accounts')
    .select(['id', 'environment', 'organization_id', 'purpose'])
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Runs `fn` in one read-only snapshot (every query sees the same committed ledger), or in the caller's transaction. */
export function inSnapshot<T>(db: Db | Trx, fn: (trx: Executor) => Promise<T>): Promise<T> {
  if (db.isTransaction) return fn(db);
  return db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(fn);
}
