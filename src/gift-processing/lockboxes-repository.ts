import { sql, type Insertable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import type { LockboxesTable, LockboxRequestsTable } from '../db/schema-gift.js';
import { newestFirstPage, type Cursor } from '../db/keyset.js';

/** Lockboxes and the PO box requests they answer (docs/gift-processing.md, "The API"). */

export type Scope = { organizationId: string; environment: Environment };

const LOCKBOX_COLUMNS = ['id', 'location_id', 'address', 'payment_source_id', 'created_at', 'updated_at'] as const;

export function findLockbox(db: Executor, scope: Scope, id: string) {
  return db
    .selectFrom('lockboxes')
    .select(LOCKBOX_COLUMNS)
    .where('id', '=', id)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .executeTakeFirst();
}

/** Newest first, keyset-paged (lockboxes_page_idx). */
export function listLockboxes(db: Executor, scope: Scope, cursor: Cursor | undefined, limit: number) {
  const query = db
    .selectFrom('lockboxes')
    .select(LOCKBOX_COLUMNS)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment);
  return newestFirstPage(query, cursor, limit).execute();
}

export function insertLockboxRequest(db: Executor, values: Insertable<LockboxRequestsTable>) {
  return db.insertInto('lockbox_requests').values(values).returningAll().executeTakeFirstOrThrow();
}

/**
 * Takes the provider's unfulfilled request, once: of concurrent callers with the same id exactly
 * one gets the row (the update's row lock serializes them; the others then see fulfilled_at set).
 */
export function reserveLockboxRequest(db: Executor, id: string, providerId: string, environment: Environment) {
  return db
    .updateTable('lockbox_requests')
    .set({ fulfilled_at: sql`now()` })
    .where('id', '=', id)
    .where('provider_organization_id', '=', providerId)
    .where('environment', '=', environment)
    .where('fulfilled_at', 'is', null)
    .returning(['id', 'organization_id', 'provider_organization_id', 'environment'])
    .executeTakeFirst();
}

export function setRequestLockbox(db: Executor, requestId: string, lockboxId: string) {
  return db.updateTable('lockbox_requests').set({ lockbox_id: lockboxId }).where('id', '=', requestId).execute();
}

export async function locationTaken(db: Executor, providerId: string, environment: Environment, locationId: string): Promise<boolean> {
  const row = await db
    .selectFrom('lockboxes')
    .select('id')
    .where('provider_organization_id', '=', providerId)
    .where('environment', '=', environment)
    .where('location_id', '=', locationId)
    .executeTakeFirst();
  return row !== undefined;
}

export function insertLockbox(db: Executor, values: Insertable<LockboxesTable>) {
  return db.insertInto('lockboxes').values(values).returning(LOCKBOX_COLUMNS).executeTakeFirstOrThrow();
}

/** Every lockbox, or one nonprofit's, with its nonprofit and provider (the admin CLI's list). */
export function listLockboxesForAdmin(db: Executor, organizationId: string | undefined) {
  return db
    .selectFrom('lockboxes as lb')
    .innerJoin('organizations as np', 'np.id', 'lb.organization_id')
    .innerJoin('organizations as pr', 'pr.id', 'lb.provider_organization_id')
    .select([
      'lb.id',
      'lb.environment',
      'lb.location_id',
      'lb.address',
      'lb.payment_source_id',
      'lb.created_at',
      'np.ein as nonprofit_ein',
      'np.name as nonprofit_name',
      'pr.ein as provider_ein',
      'pr.name as provider_name',
    ])
    .$if(organizationId !== undefined, (q) => q.where('lb.organization_id', '=', organizationId!))
    .orderBy('lb.created_at', 'desc')
    .orderBy('lb.id', 'desc')
    .execute();
}
