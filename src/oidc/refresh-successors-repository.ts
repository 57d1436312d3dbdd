import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';

/**
 * Queries on oidc_refresh_successors: the sealed token pair a refresh answered with, kept for
 * the refresh grace window (middleware/refresh-grace.ts) and swept after it (chores.ts).
 */

export function findSuccessor(db: Db, environment: Environment, id: string) {
  return db.selectFrom('oidc_refresh_successors').select(['ciphertext', 'expires_at']).where('environment', '=', environment).where('id', '=', id).executeTakeFirst();
}

/** Stores the pair a refresh answered with; the first answer stored for a token stays. */
export async function storeSuccessor(db: Db, values: { environment: Environment; id: string; ciphertext: string; expires_at: Date }): Promise<void> {
  await db
    .insertInto('oidc_refresh_successors')
    .values(values)
    .onConflict((oc) => oc.columns(['environment', 'id']).doNothing())
    .execute();
}

export async function deleteExpiredSuccessors(db: Db): Promise<void> {
  await db.deleteFrom('oidc_refresh_successors').where('expires_at', '<', new Date()).execute();
}
