import type { Executor } from '../../db/executor.js';
import type { Environment } from '../../db/schema.js';

/** The admin CLI's side of api_keys (the gateway's credential lookup is auth/credential-repository.ts). */
export function insertApiKey(db: Executor, values: { id: string; environment: Environment; organization_id: string; key_hash: string; key_prefix: string }) {
  return db.insertInto('api_keys').values(values).execute();
}

/** Revokes a live key; undefined when there is no such key or it is already revoked. */
export function revokeLiveApiKey(db: Executor, id: string) {
  return db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', id).where('revoked_at', 'is', null).returning(['id', 'environment', 'organization_id']).executeTakeFirst();
}

export function findApiKeyId(db: Executor, id: string) {
  return db.selectFrom('api_keys').select('id').where('id', '=', id).executeTakeFirst();
}

export function listApiKeysOfOrganization(db: Executor, organizationId: string) {
  return db.selectFrom('api_keys').selectAll().where('organization_id', '=', organizationId).orderBy('created_at').orderBy('id').execute();
}
