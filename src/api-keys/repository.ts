import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';

/** The admin side of api_keys: the CLI's and the dashboard's (the gateway's credential lookup is auth/credential-repository.ts). */
export function insertApiKey(
  db: Executor,
  values: { id: string; environment: Environment; organization_id: string; key_hash: string; key_prefix: string; name: string | null },
) {
  return db.insertInto('api_keys').values(values).execute();
}

type KeyScope = { organizationId: string; environment: Environment } | undefined;

/** Revokes a live key (of `scope` when given); undefined when there is no such key or it is already revoked. */
export function revokeLiveApiKey(db: Executor, id: string, scope?: KeyScope) {
  let query = db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', id).where('revoked_at', 'is', null);
  if (scope) query = query.where('organization_id', '=', scope.organizationId).where('environment', '=', scope.environment);
  return query.returning(['id', 'environment', 'organization_id']).executeTakeFirst();
}

export function findApiKeyId(db: Executor, id: string, scope?: KeyScope) {
  let query = db.selectFrom('api_keys').select('id').where('id', '=', id);
  if (scope) query = query.where('organization_id', '=', scope.organizationId).where('environment', '=', scope.environment);
  return query.executeTakeFirst();
}

/** An organization's keys (of one environment when given), oldest first, revoked ones included. */
export function listApiKeysOfOrganization(db: Executor, organizationId: string, environment?: Environment) {
  let query = db.selectFrom('api_keys').selectAll().where('organization_id', '=', organizationId);
  if (environment) query = query.where('environment', '=', environment);
  return query.orderBy('created_at').orderBy('id').execute();
}

/** One key of an organization and environment, revoked or not (never its hash). */
export function findApiKeyOf(db: Executor, id: string, scope: { organizationId: string; environment: Environment }) {
  return db
    .selectFrom('api_keys')
    .select(['id', 'key_prefix', 'name', 'created_at', 'last_used_at', 'revoked_at'])
    .where('id', '=', id)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .executeTakeFirst();
}
