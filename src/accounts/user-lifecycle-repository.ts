import { sql } from 'kysely';
import type { Executor } from '../db/executor.js';

/** Queries of the account lifecycle: listing users, disabling and enabling, replacing a password. */

/** Every user with how many organizations they belong to, by address. */
export function listUsersWithMembershipCounts(db: Executor) {
  return db
    .selectFrom('users as u')
    .select(['u.id', 'u.email', 'u.display_name', 'u.disabled_at', 'u.created_at'])
    .select((eb) =>
      eb
        .selectFrom('memberships as m')
        .select(sql<string>`count(*)`.as('n'))
        .whereRef('m.user_id', '=', 'u.id')
        .as('organizations'),
    )
    .orderBy('u.email')
    .execute();
}

/** Disables an active user; undefined when already disabled (the row lock orders concurrent calls). */
export function markUserDisabled(db: Executor, userId: string) {
  return db
    .updateTable('users')
    .set({ disabled_at: new Date(), updated_at: new Date() })
    .where('id', '=', userId)
    .where('disabled_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
}

/** Enables a disabled user; undefined when not disabled. */
export function markUserEnabled(db: Executor, userId: string) {
  return db
    .updateTable('users')
    .set({ disabled_at: null, updated_at: new Date() })
    .where('id', '=', userId)
    .where('disabled_at', 'is not', null)
    .returning('id')
    .executeTakeFirst();
}

/** A new password hash, with when it changed. */
export function setPasswordHash(db: Executor, userId: string, passwordHash: string) {
  return db
    .updateTable('users')
    .set({ password_hash: passwordHash, password_changed_at: new Date(), updated_at: new Date() })
    .where('id', '=', userId)
    .execute();
}

export async function findPasswordHash(db: Executor, userId: string): Promise<string | undefined> {
  return (await db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirst())?.password_hash;
}
