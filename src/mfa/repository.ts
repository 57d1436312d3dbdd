import { sql } from 'kysely';
import type { Executor } from '../db/executor.js';

/** The second-factor tables: totp_credentials (one per user) and recovery_codes. */

export async function findTotp(db: Executor, userId: string) {
  return db.selectFrom('totp_credentials').selectAll().where('user_id', '=', userId).executeTakeFirst();
}

/** A new, unconfirmed secret replaces an earlier unconfirmed one; a confirmed one is kept (undefined). */
export async function upsertPendingTotp(db: Executor, userId: string, sealedSecret: string): Promise<boolean> {
  const row = await db
    .insertInto('totp_credentials')
    .values({ user_id: userId, secret: sealedSecret })
    .onConflict((oc) =>
      oc.column('user_id').doUpdateSet({ secret: sealedSecret, last_time_step: null }).where('totp_credentials.confirmed_at', 'is', null),
    )
    .returning('user_id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Records the use of time step `step`: succeeds only when it is later than every step used
 * before, in one conditional update, so a code (or an earlier one) works once even when two
 * requests race. `confirming` also marks the secret confirmed.
 */
export async function useTimeStep(db: Executor, userId: string, step: number, confirming: boolean): Promise<boolean> {
  let query = db
    .updateTable('totp_credentials')
    .set({ last_time_step: String(step), ...(confirming ? { confirmed_at: sql<Date>`now()` } : {}) })
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('last_time_step', 'is', null), eb('last_time_step', '<', String(step))]));
  query = confirming ? query.where('confirmed_at', 'is', null) : query.where('confirmed_at', 'is not', null);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Locks the user's row for the rest of the transaction: changes to one user's second factors
 * are made one at a time, so "has the user a factor yet?" cannot be answered by two at once.
 */
export async function lockUserFactors(db: Executor, userId: string): Promise<void> {
  await db.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute();
}

/** Every second factor of the user (an administrator's reset): the app, the passkeys, the recovery codes. Whether there was any. */
export async function deleteAllFactors(db: Executor, userId: string): Promise<{ totp: boolean; passkeys: number; recoveryCodes: number }> {
  const totp = await db
    .deleteFrom('totp_credentials')
    .where('user_id', '=', userId)
    .where('confirmed_at', 'is not', null)
    .executeTakeFirst();
  await db.deleteFrom('totp_credentials').where('user_id', '=', userId).execute();
  const passkeys = await db.deleteFrom('webauthn_credentials').where('user_id', '=', userId).executeTakeFirst();
  const codes = await db.deleteFrom('recovery_codes').where('user_id', '=', userId).executeTakeFirst();
  return { totp: Number(totp.numDeletedRows) > 0, passkeys: Number(passkeys.numDeletedRows), recoveryCodes: Number(codes.numDeletedRows) };
}

export async function deleteTotp(db: Executor, userId: string): Promise<boolean> {
  const result = await db.deleteFrom('totp_credentials').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function replaceRecoveryCodes(db: Executor, userId: string, hashes: string[]): Promise<void> {
  await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
  await db
    .insertInto('recovery_codes')
    .values(hashes.map((code_hash) => ({ user_id: userId, code_hash })))
    .execute();
}

export async function deleteRecoveryCodes(db: Executor, userId: string): Promise<void> {
  await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
}

/** Marks an unused code used, in one conditional update: true for the one request that did. */
export async function useRecoveryCode(db: Executor, userId: string, hash: string): Promise<boolean> {
  const result = await db
    .updateTable('recovery_codes')
    .set({ used_at: sql<Date>`now()` })
    .where('user_id', '=', userId)
    .where('code_hash', '=', hash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Whether the user has this recovery code and it was used (said so, rather than "did not work"). */
export async function isUsedRecoveryCode(db: Executor, userId: string, hash: string): Promise<boolean> {
  const row = await db
    .selectFrom('recovery_codes')
    .select('user_id')
    .where('user_id', '=', userId)
    .where('code_hash', '=', hash)
    .where('used_at', 'is not', null)
    .executeTakeFirst();
  return row !== undefined;
}

/** What a user has enrolled: a confirmed TOTP secret, unused recovery codes, passkeys. */
export async function secondFactorSummary(
  db: Executor,
  userId: string,
): Promise<{ totp: boolean; recoveryCodesLeft: number; passkeys: number }> {
  const row = await db
    .selectNoFrom((eb) => [
      eb
        .exists(eb.selectFrom('totp_credentials').select('user_id').where('user_id', '=', userId).where('confirmed_at', 'is not', null))
        .as('totp'),
      eb
        .selectFrom('recovery_codes')
        .select((e) => e.fn.countAll<string>().as('n'))
        .where('user_id', '=', userId)
        .where('used_at', 'is', null)
        .as('codes'),
      eb
        .selectFrom('webauthn_credentials')
        .select((e) => e.fn.countAll<string>().as('n'))
        .where('user_id', '=', userId)
        .as('passkeys'),
    ])
    .executeTakeFirstOrThrow();
  return { totp: Boolean(row.totp), recoveryCodesLeft: Number(row.codes ?? 0), passkeys: Number(row.passkeys ?? 0) };
}
