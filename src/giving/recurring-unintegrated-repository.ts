import type { Selectable } from 'kysely';
import type { Executor } from '../db/executor.js';
import { newestFirstPage, type Cursor } from '../db/keyset.js';
import type { Environment } from '../db/schema.js';
import type { RecurringGrantsTable, UnintegratedGrantsTable } from '../db/schema-giving.js';

/** Reading recurring and unintegrated grants, the owner's only (docs/giving.md, "Recurring and unintegrated grants"). */

type Scope = { organizationId: string; environment: Environment };
export type UnintegratedGrantRow = Selectable<UnintegratedGrantsTable>;
export type RecurringGrantListRow = Selectable<RecurringGrantsTable>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function listRecurringGrants(db: Executor, scope: Scope, connectId: string | undefined, cursor: Cursor | undefined, limit: number) {
  let query = db
    .selectFrom('recurring_grants')
    .selectAll()
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment);
  if (connectId) query = query.where('connect_id', '=', connectId);
  return newestFirstPage(query, cursor, limit).execute();
}

export function findRecurringGrant(db: Executor, scope: Scope, id: string): Promise<RecurringGrantListRow | undefined> {
  if (!UUID.test(id)) return Promise.resolve(undefined);
  return db
    .selectFrom('recurring_grants')
    .selectAll()
    .where('id', '=', id)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .executeTakeFirst();
}

export function listUnintegratedGrants(
  db: Executor,
  scope: Scope,
  connectId: string | undefined,
  cursor: Cursor | undefined,
  limit: number,
) {
  let query = db
    .selectFrom('unintegrated_grants')
    .selectAll()
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment);
  if (connectId) query = query.where('connect_id', '=', connectId);
  return newestFirstPage(query, cursor, limit).execute();
}

export function findUnintegratedGrant(db: Executor, scope: Scope, id: string): Promise<UnintegratedGrantRow | undefined> {
  if (!UUID.test(id)) return Promise.resolve(undefined);
  return db
    .selectFrom('unintegrated_grants')
    .selectAll()
    .where('id', '=', id)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .executeTakeFirst();
}
