import type { Kysely, Transaction } from 'kysely';
import type { Db } from './database.js';
import type { Database } from './schema.js';

/** Only repositories touch Kysely. They take `db | trx` first and return rows. */
export type Executor = Db | Kysely<Database> | Transaction<Database>;

/** An open transaction, as inTransaction hands it to its callback: pass it on to repositories. */
export type Trx = Transaction<Database>;

/**
 * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. How a
 * service makes several repository calls all-or-nothing without touching Kysely itself.
 */
export function inTransaction<T>(db: Db, fn: (trx: Trx) => Promise<T>): Promise<T> {
  return db.transaction().execute(fn);
}
