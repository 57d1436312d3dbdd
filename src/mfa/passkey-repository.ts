import { sql } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { WebauthnChallengesTable } from '../db/schema-identity.js';

/** The passkey tables: webauthn_credentials (a user's passkeys) and webauthn_challenges (single use). */

export async function listPasskeys(db: Executor, userId: string) {
  return db
    .selectFrom('webauthn_credentials')
    .select(['id', 'name', 'device_type', 'rp_id', 'created_at', 'last_used_at', 'transports'])
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute();
}

export async function findPasskey(db: Executor, id: string) {
  return db
    .selectFrom('webauthn_credentials as w')
    .innerJoin('users as u', 'u.id', 'w.user_id')
    .select(['w.id', 'w.user_id', 'w.public_key', 'w.counter', 'w.transports', 'w.device_type', 'w.name', 'w.rp_id', 'u.disabled_at'])
    .where('w.id', '=', id)
    .executeTakeFirst();
}

export async function insertPasskey(
  db: Executor,
  row: {
    id: string;
    user_id: string;
    public_key: Buffer;
    counter: number;
    transports: string[];
    device_type: 'singleDevice' | 'multiDevice';
    backed_up: boolean;
    name: string;
    rp_id: string;
  },
): Promise<boolean> {
  const inserted = await db
    .insertInto('webauthn_credentials')
    .values({ ...row, counter: String(row.counter) })
    .onConflict((oc) => oc.column('id').doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/**
 * Records a use: the signature counter moves forward (or stays 0 for authenticators that do
 * not count), in one conditional update, so a cloned authenticator's older count loses.
 */
export async function recordPasskeyUse(db: Executor, id: string, counter: number, backedUp: boolean): Promise<boolean> {
  const result = await db
    .updateTable('webauthn_credentials')
    .set({ counter: String(counter), backed_up: backedUp, last_used_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('counter', counter === 0 ? '=' : '<', String(counter))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Deletes one of the user's passkeys; its name, or undefined when there was none. */
export async function deletePasskey(db: Executor, userId: string, id: string): Promise<string | undefined> {
  const row = await db
    .deleteFrom('webauthn_credentials')
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .returning('name')
    .executeTakeFirst();
  return row?.name;
}

/** One challenge per browser key: a new one replaces the last (the key is the SHA-256 of the browser's cookie). */
export async function saveChallenge(db: Executor, row: Omit<WebauthnChallengesTable, 'expires_at'>, seconds: number): Promise<void> {
  const expires = sql<Date>`now() + make_interval(secs => ${seconds})`;
  await db
    .insertInto('webauthn_challenges')
    .values({ ...row, expires_at: expires })
    .onConflict((oc) =>
      oc.column('id').doUpdateSet({ challenge: row.challenge, purpose: row.purpose, user_id: row.user_id, expires_at: expires }),
    )
    .execute();
}

/** Takes the browser's challenge for `purpose`: deleted as it is read, so it serves one answer. */
export async function takeChallenge(db: Executor, id: string, purpose: WebauthnChallengesTable['purpose']) {
  return db
    .deleteFrom('webauthn_challenges')
    .where('id', '=', id)
    .where('purpose', '=', purpose)
    .where('expires_at', '>', sql<Date>`now()`)
    .returning(['challenge', 'user_id'])
    .executeTakeFirst();
}

export async function deleteExpiredChallenges(db: Executor): Promise<number> {
  const result = await db
    .deleteFrom('webauthn_challenges')
    .where('expires_at', '<', sql<Date>`now()`)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Deletes up to `max` expired challenges, skipping rows another statement holds: each new
 * passwordless challenge clears some, so a flood's rows go as they expire rather than at the
 * next sweep.
 */
export async function deleteSomeExpiredChallenges(db: Executor, max: number): Promise<void> {
  await sql`
    delete from webauthn_challenges
     where id in (select id from webauthn_challenges where expires_at < now() order by expires_at limit ${max} for update skip locked)`.execute(
    db,
  );
}
