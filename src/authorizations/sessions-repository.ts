import { sql } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';

/**
 * Writes to the provider's Session rows (oidc_models, model Session) that the adapter
 * contract has no call for: ending a session found by uid, and dropping a revoked grant from
 * every session that references it.
 */

/**
 * Deletes a provider session by its uid. Session ids are stored hashed and the raw id is not
 * in the payload, so a Session loaded by uid cannot destroy itself through the adapter.
 */
export async function destroySessionByUid(db: Executor, environment: Environment, uid: string): Promise<void> {
  await db.deleteFrom('oidc_models').where('environment', '=', environment).where('model', '=', 'Session').where('uid', '=', uid).execute();
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

/**
 * Ends every browser session of one user in both environments (a password reset, a disabled
 * account), or all but `keep` (a password change keeps the session it was made in). Sessions
 * are found by the account id in their payload (index oidc_models_session_account_idx).
 * Returns how many ended.
 */
export async function destroyUserSessions(db: Executor, userId: string, keep?: { environment: Environment; uid: string }): Promise<number> {
  let query = db.deleteFrom('oidc_models').where('model', '=', 'Session').where(sql<string>`payload ->> 'accountId'`, '=', userId);
  if (keep) query = query.where((eb) => eb.not(eb.and([eb('environment', '=', keep.environment), eb('uid', '=', keep.uid)])));
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}
