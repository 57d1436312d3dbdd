import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Environment, GrantsTable } from '../../db/schema.js';
import { newestFirstPage, type Cursor } from '../../db/keyset.js';

type Scope = { organizationId: string; environment: Environment };

export type GrantRow = Selectable<GrantsTable>;

/** The caller's grants, across all its connects or one of them, newest first, keyset-paged. */
export function listGrants(db: Db, scope: Scope, connectId: string | undefined, cursor: Cursor | undefined, limit: number) {
  let query = db
    .selectFrom('grants')
    .selectAll()
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment);
  if (connectId) query = query.where('connect_id', '=', connectId);
  return newestFirstPage(query, cursor, limit).execute();
}

export function findGrant(db: Db, scope: Scope, id: string) {
  return db
    .selectFrom('grants')
    .selectAll()
    .where('id', '=', id)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .executeTakeFirst();
}

export function connectBelongsTo(db: Db, scope: Scope, connectId: string) {
  return db
    .selectFrom('connects')
    .select('id')
    .where('id', '=', connectId)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .executeTakeFirst();
}
