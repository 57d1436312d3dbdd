import { sql } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';

/**
 * Our record of each signed-in browser session (table browser_sessions) and the users'
 * credentials epoch it is bound to (docs/accounts.md, "Sessions"). The provider's Session row
 * holds the cookie's state; a session counts only while its record's epoch is its user's.
 */

export interface NewBrowserSession {
  environment: Environment;
  sessionUid: string;
  userId: string;
  epoch: number;
  amr: readonly string[];
  signedInAt: Date;
  /** Set when the sign-in proved a second factor. */
  factorProvedAt: Date | null;
  ip: string | null;
  userAgent: string | null;
  expiresAt: Date;
}

/**
 * Records a sign-in into a session: a new session, or the same session signed in again (a
 * step-up, a sign-in asked for again), which takes the new sign-in's epoch and methods.
 */
export async function recordBrowserSession(db: Executor, s: NewBrowserSession): Promise<void> {
  await db
    .insertInto('browser_sessions')
    .values({
      environment: s.environment,
      session_uid: s.sessionUid,
      user_id: s.userId,
      credentials_epoch: s.epoch,
      amr: [...s.amr],
      signed_in_at: s.signedInAt,
      factor_proved_at: s.factorProvedAt,
      ip: s.ip,
      user_agent: s.userAgent,
      expires_at: s.expiresAt,
    })
    .onConflict((oc) =>
      oc.columns(['environment', 'session_uid']).doUpdateSet((eb) => ({
        user_id: eb.ref('excluded.user_id'),
        credentials_epoch: eb.ref('excluded.credentials_epoch'),
        amr: eb.ref('excluded.amr'),
        signed_in_at: eb.ref('excluded.signed_in_at'),
        factor_proved_at: eb.ref('excluded.factor_proved_at'),
        ip: eb.ref('excluded.ip'),
        user_agent: eb.ref('excluded.user_agent'),
        last_seen_at: sql<Date>`now()`,
        expires_at: eb.ref('excluded.expires_at'),
      })),
    )
    .execute();
}

export interface SessionUser {
  id: string;
  email: string;
  display_name: string | null;
  disabled_at: Date | null;
  /** The session's record: its id (for the Security page's forms) and when it last proved a second factor. */
  sessionId: string;
  factor_proved_at: Date | null;
}

/**
 * The user of a signed-in session, when the session still counts: its record names that user
 * at the user's current credentials epoch. One statement.
 */
export async function findSessionUser(
  db: Executor,
  environment: Environment,
  sessionUid: string,
  userId: string,
): Promise<SessionUser | undefined> {
  return db
    .selectFrom('browser_sessions as b')
    .innerJoin('users as u', (join) => join.onRef('u.id', '=', 'b.user_id').onRef('u.credentials_epoch', '=', 'b.credentials_epoch'))
    .select(['u.id', 'u.email', 'u.display_name', 'u.disabled_at', 'b.id as sessionId', 'b.factor_proved_at'])
    .where('b.environment', '=', environment)
    .where('b.session_uid', '=', sessionUid)
    .where('b.user_id', '=', userId)
    .where('b.expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst();
}

/** The user's current credentials epoch (undefined: no such user). */
export async function credentialsEpoch(db: Executor, userId: string): Promise<number | undefined> {
  const row = await db.selectFrom('users').select('credentials_epoch').where('id', '=', userId).executeTakeFirst();
  return row?.credentials_epoch;
}

/** The session proved a second factor now (a re-check or step-up on the dashboard). */
export async function markFactorProved(db: Executor, environment: Environment, sessionUid: string, amr: readonly string[]): Promise<void> {
  await db
    .updateTable('browser_sessions')
    .set({ factor_proved_at: sql<Date>`now()`, amr: [...amr], last_seen_at: sql<Date>`now()` })
    .where('environment', '=', environment)
    .where('session_uid', '=', sessionUid)
    .execute();
}

/** last_seen_at, written at most every few minutes (the caller throttles). */
export async function touchBrowserSession(db: Executor, id: string): Promise<void> {
  await db
    .updateTable('browser_sessions')
    .set({ last_seen_at: sql<Date>`now()` })
    .where('id', '=', id)
    .execute();
}

export interface BrowserSessionRow {
  id: string;
  environment: Environment;
  session_uid: string;
  amr: string[];
  signed_in_at: Date;
  last_seen_at: Date;
  ip: string | null;
  user_agent: string | null;
}

/** The user's sessions that still count (their provider session exists, at the current epoch), newest first. */
export async function listBrowserSessions(db: Executor, userId: string): Promise<BrowserSessionRow[]> {
  return db
    .selectFrom('browser_sessions as b')
    .innerJoin('users as u', (join) => join.onRef('u.id', '=', 'b.user_id').onRef('u.credentials_epoch', '=', 'b.credentials_epoch'))
    .select([
      'b.id',
      'b.environment',
      'b.session_uid',
      'b.amr',
      'b.signed_in_at',
      'b.last_seen_at',
      sql<string | null>`host(b.ip)`.as('ip'),
      'b.user_agent',
    ])
    .where('b.user_id', '=', userId)
    .where('b.expires_at', '>', sql<Date>`now()`)
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('oidc_models as s')
          .select(sql`1`.as('one'))
          .whereRef('s.environment', '=', 'b.environment')
          .whereRef('s.uid', '=', 'b.session_uid')
          .where('s.model', '=', 'Session'),
      ),
    )
    .orderBy('b.last_seen_at', 'desc')
    .orderBy('b.id')
    .execute();
}

/** One session of the user by its record's id: deletes the record, returns where its provider session is. */
export async function deleteBrowserSession(
  db: Executor,
  userId: string,
  id: string,
): Promise<{ environment: Environment; session_uid: string } | undefined> {
  return db
    .deleteFrom('browser_sessions')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .returning(['environment', 'session_uid'])
    .executeTakeFirst();
}

/** The record of one session (signed out). */
export async function deleteBrowserSessionByUid(db: Executor, environment: Environment, sessionUid: string): Promise<void> {
  await db.deleteFrom('browser_sessions').where('environment', '=', environment).where('session_uid', '=', sessionUid).execute();
}

/** Records past their session's lifetime (the chores' sweep). */
export async function sweepBrowserSessions(db: Executor, limit = 1000): Promise<number> {
  const result =
    await sql`delete from browser_sessions where id in (select id from browser_sessions where expires_at < now() limit ${limit})`.execute(
      db,
    );
  return Number(result.numAffectedRows ?? 0);
}
