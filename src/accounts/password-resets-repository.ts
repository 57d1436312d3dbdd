import { sql } from 'kysely';
import type { Executor } from '../db/executor.js';

/** The password_resets table (migration 20261125000100): a reset link's token as its SHA-256, single use. */

export function insertPasswordReset(db: Executor, values: { tokenHash: string; userId: string; lifetimeSeconds: number }) {
  return db
    .insertInto('password_resets')
    .values({
      token_hash: values.tokenHash,
      user_id: values.userId,
      expires_at: sql<Date>`now() + make_interval(secs => ${values.lifetimeSeconds})`,
    })
    .execute();
}

/** A link's row with its user and whether it can still be used (judged by the database's clock). */
export function findPasswordReset(db: Executor, tokenHash: string) {
  return db
    .selectFrom('password_resets as r')
    .innerJoin('users as u', 'u.id', 'r.user_id')
    .select(['r.user_id', 'u.email', 'u.disabled_at', 'r.used_at', sql<boolean>`r.expires_at <= now()`.as('expired')])
    .where('r.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/**
 * Uses a link: one conditional UPDATE, so of any number of concurrent submissions of the
 * same link exactly one gets the user id back; used, expired or unknown links get nothing.
 */
export async function consumePasswordReset(db: Executor, tokenHash: string): Promise<string | undefined> {
  const row = await db
    .updateTable('password_resets')
    .set({ used_at: sql<Date>`now()` })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where(sql<boolean>`expires_at > now()`)
    .returning('user_id')
    .executeTakeFirst();
  return row?.user_id;
}

/** Every open link of a user ends when the password changes, however it changed. */
export function consumeAllPasswordResets(db: Executor, userId: string) {
  return db
    .updateTable('password_resets')
    .set({ used_at: sql<Date>`now()` })
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .execute();
}
