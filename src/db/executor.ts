import { sql, type Kysely, type Transaction } from 'kysely';
import type { Db } from './database.js';
import type { Database } from './schema.js';

/** Only repositories touch Kysely. They take `db | trx` first and return rows. */
export type Executor = Db | Kysely<Database> | Transaction<Database>;

/** An open transaction, as inTransaction hands it to its callback: pass it on to repositories. */
export type Trx = Transaction<Database>;

let savepoints = 0;

/**
 * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. How a
 * service makes several repository calls all-or-nothing without touching Kysely itself.
 *
 * Given a transaction already open (a request run under an idempotency key runs its handler in
 * the key's transaction: docs/api.md, "Idempotency"), `fn` runs inside it, under a savepoint:
 * its work commits with the outer transaction, and when it throws only its own work is undone,
 * so a caller that catches the error still has a usable transaction, as it would have had with
 * a transaction of its own. (Kysely's `transaction()` on a Transaction throws.)
 */
export async function inTransaction<T>(db: Db, fn: (trx: Trx) => Promise<T>): Promise<T> {
  if (!db.isTransaction) return db.transaction().execute(fn);
  const trx = db as Trx;
  const name = sql.id(`nested_${++savepoints}`);
  await sql`savepoint ${name}`.execute(trx);
  let result: T;
  try {
    result = await fn(trx);
  } catch (error) {
    await sql`rollback to savepoint ${name}`.execute(trx);
    throw error;
  }
  await sql`release savepoint ${name}`.execute(trx);
  return result;
}
