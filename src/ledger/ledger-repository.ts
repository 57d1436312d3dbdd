import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import type { LedgerPurpose } from '../db/schema-ledger.js';

/** The ledger's writes and reads (docs/ledger.md); the verification's queries are in verification-repository.ts. */

export function insertLedgerAccount(
  db: Executor,
  values: { id: string; environment: Environment; organization_id: string | null; purpose: LedgerPurpose; may_go_negative: boolean },
) {
  return db.insertInto('ledger_accounts').values(values).returningAll().executeTakeFirstOrThrow();
}

/** The accounts of `ids` that exist (any environment: the caller compares). */
export function findLedgerAccounts(db: Executor, ids: readonly string[]) {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('ledger_accounts').selectAll().where('id', 'in', ids).execute();
}

/**
 * Inserts the transfer unless one with its reference (or, for a hold's end, the other end of
 * that hold) is there: undefined then. ON CONFLICT DO NOTHING leaves the caller's transaction
 * usable, and a concurrent insert of the same reference waits for the first to commit.
 */
export function insertTransferOnce(
  db: Executor,
  values: { id: string; environment: Environment; kind: string; reference_type: string; reference_id: string },
) {
  return db
    .insertInto('ledger_transfers')
    .values(values)
    .onConflict((oc) => oc.doNothing())
    .returning('id')
    .executeTakeFirst();
}

/** The transfers of one reference among `kinds` (what an "already posted" names). */
export function findTransfersOfReference(
  db: Executor,
  where: { environment: Environment; kinds: readonly string[]; referenceType: string; referenceId: string },
) {
  return db
    .selectFrom('ledger_transfers')
    .selectAll()
    .where('environment', '=', where.environment)
    .where('kind', 'in', where.kinds)
    .where('reference_type', '=', where.referenceType)
    .where('reference_id', '=', where.referenceId)
    .orderBy('id')
    .execute();
}

/**
 * The entries, in the order given: the caller sorts them by account, so concurrent transfers
 * lock their accounts' rows in one order and cannot deadlock on them.
 */
export function insertEntries(
  db: Executor,
  rows: readonly { id: string; transfer_id: string; account_id: string; environment: Environment; amount: number }[],
) {
  return db.insertInto('ledger_entries').values(rows).execute();
}

export function entriesOfTransfer(db: Executor, transferId: string) {
  return db
    .selectFrom('ledger_entries')
    .select(['account_id', 'amount'])
    .where('transfer_id', '=', transferId)
    .orderBy('account_id')
    .execute();
}
