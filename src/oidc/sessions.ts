import type { Executor } from '../accounts/repository.js';
import type { Environment } from '../db/schema.js';

/**
 * Deletes a provider session by its uid. Session ids are stored hashed and the raw id is not
 * in the payload, so a Session loaded by uid cannot destroy itself through the adapter.
 */
export async function destroySessionByUid(db: Executor, environment: Environment, uid: string): Promise<void> {
  await db.deleteFrom('oidc_models').where('environment', '=', environment).where('model', '=', 'Session').where('uid', '=', uid).execute();
}
