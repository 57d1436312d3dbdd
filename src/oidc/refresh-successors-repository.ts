import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';

/**
 * Queries on oidc_refresh_successors: the sealed token pair a refresh answered with, kept for
 * the refresh grace window (refresh-successors.ts; written with the rotation by unit-of-work-repository.ts) and swept after it (chores.ts).
 */

export function findSuccessor(db: Db, environment: Environment, id: string) {
  return db
    .selectFrom('oidc_refresh_successors')
    .select(['ciphertext', 'expires_at'])
    .where('environment', '=', environment)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function deleteExpiredSuccessors(db: Db): Promise<void> {
  await db.deleteFrom('oidc_refresh_successors').where('expires_at', '<', new Date()).execute();
}
