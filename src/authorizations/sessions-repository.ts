import { sql } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';

/**
 * Writes to the provider's Session rows (oidc_models, model Session) that the adapter
 * contract has no call for: ending a session found by uid, ending every sign-in of a user, and
 * dropping a revoked grant from every session that references it. The payload fields they rely
 * on (accountId, authorizations) are declared in db/provider-payload.ts.
 */

/**
 * Deletes a provider session by its uid. Session ids are stored hashed and the raw id is not
 * in the payload, so a Session loaded by uid cannot destroy itself through the adapter.
 */
export async function destroySessionByUid(db: Executor, environment: Environment, uid: string): Promise<void> {
  await db.deleteFrom('oidc_models').where('environment', '=', environment).where('model', '=', 'Session').where('uid', '=', uid).execute();
  await db.deleteFrom('browser_sessions').where('environment', '=', environment).where('session_uid', '=', uid).execute();
}

/** Removes a grant from the sessions that point at it, so no session keeps a dangling reference. */
export async function forgetGrantInSessions(db: Executor, environment: Environment, grantId: string): Promise<void> {
  await sql`
    update oidc_models s
    set payload = jsonb_set(s.payload, '{authorizations}', coalesce((
      select jsonb_object_agg(k, v) from jsonb_each(s.payload->'authorizations') as e(k, v)
      where v->>'grantId' is distinct from ${grantId}
    ), '{}'::jsonb))
    where s.environment = ${environment} and s.model = 'Session'
      and s.payload @? ${`$.authorizations.* ? (@.grantId == "${grantId.replace(/[^A-Za-z0-9_-]/g, '')}")`}::jsonpath`.execute(db);
}

type KeptSession = { environment: Environment; uid: string };

/**
 * Ends every sign-in of one user (docs/accounts.md, "Sessions"): a password reset or change, a
 * second factor removed or reset, a disabled account. Every browser session in both
 * environments ends (all of them, or all but `keep`, the session the change was made in), and
 * the user's credentials epoch rises, so a sign-in still in progress (a password step whose
 * interaction has not resumed, a second-factor step waiting in its cookie) is refused when it
 * is used, and `keep` is bound to the new epoch. Inside the caller's transaction. Returns how
 * many sessions ended.
 */
export async function endUserSignIns(db: Executor, userId: string, keep?: KeptSession): Promise<number> {
  const sessionsEnded = await destroyUserSessions(db, userId, keep);
  let records = db.deleteFrom('browser_sessions').where('user_id', '=', userId);
  if (keep) records = records.where((eb) => eb.not(eb.and([eb('environment', '=', keep.environment), eb('session_uid', '=', keep.uid)])));
  await records.execute();
  const { credentials_epoch: epoch } = await db
    .updateTable('users')
    .set((eb) => ({ credentials_epoch: eb('credentials_epoch', '+', 1) }))
    .where('id', '=', userId)
    .returning('credentials_epoch')
    .executeTakeFirstOrThrow();
  if (keep) {
    await db
      .updateTable('browser_sessions')
      .set({ credentials_epoch: epoch })
      .where('environment', '=', keep.environment)
      .where('session_uid', '=', keep.uid)
      .where('user_id', '=', userId)
      .execute();
  }
  return sessionsEnded;
}

/**
 * The provider sessions of one user in both environments, or all but `keep`. Sessions are
 * found by the account id in their payload (index oidc_models_session_account_idx). Returns how
 * many ended.
 */
async function destroyUserSessions(db: Executor, userId: string, keep?: KeptSession): Promise<number> {
  let query = db
    .deleteFrom('oidc_models')
    .where('model', '=', 'Session')
    .where(sql<string>`payload ->> 'accountId'`, '=', userId);
  if (keep) query = query.where((eb) => eb.not(eb.and([eb('environment', '=', keep.environment), eb('uid', '=', keep.uid)])));
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}
