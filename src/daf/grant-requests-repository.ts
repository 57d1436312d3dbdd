import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { GivingPoolsTable, GrantRequestsTable } from '../db/schema-daf.js';
import { newestFirstPage, type Cursor } from '../db/keyset.js';
import type { DafScope } from './scope.js';

type Scope = Omit<DafScope, 'principal'>;

export type GrantRequestRow = Selectable<GrantRequestsTable>;
export type GrantRequestChanges = Updateable<GrantRequestsTable>;
export type GivingPoolRow = Selectable<GivingPoolsTable>;

export function findGrantRequest(db: Executor, scope: Scope, id: string, forUpdate = false) {
  let query = db
    .selectFrom('grant_requests')
    .selectAll()
    .where('id', '=', id)
    .where('fund_provider_id', '=', scope.fundProviderId)
    .where('environment', '=', scope.environment);
  if (forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export function listGrantRequests(
  db: Executor,
  scope: Scope,
  donorAccountId: string | undefined,
  cursor: Cursor | undefined,
  limit: number,
) {
  let query = db
    .selectFrom('grant_requests')
    .selectAll()
    .where('fund_provider_id', '=', scope.fundProviderId)
    .where('environment', '=', scope.environment);
  if (donorAccountId) query = query.where('donor_account_id', '=', donorAccountId);
  return newestFirstPage(query, cursor, limit).execute();
}

export function findGivingPool(db: Executor, scope: Scope, id: string) {
  return db
    .selectFrom('giving_pools')
    .selectAll()
    .where('id', '=', id)
    .where('fund_provider_id', '=', scope.fundProviderId)
    .where('environment', '=', scope.environment)
    .executeTakeFirst();
}

export function listGivingPools(db: Executor, scope: Scope, donorAccountId: string | undefined, cursor: Cursor | undefined, limit: number) {
  let query = db
    .selectFrom('giving_pools')
    .selectAll()
    .where('fund_provider_id', '=', scope.fundProviderId)
    .where('environment', '=', scope.environment);
  if (donorAccountId) query = query.where('donor_account_id', '=', donorAccountId);
  return newestFirstPage(query, cursor, limit).execute();
}

export async function findOrCreateGivingPool(db: Executor, scope: Scope, donorAccountId: string, name: string) {
  const existing = await db
    .selectFrom('giving_pools')
    .selectAll()
    .where('donor_account_id', '=', donorAccountId)
    .where('name', '=', name)
    .executeTakeFirst();
  if (existing) return existing;
  return db
    .insertInto('giving_pools')
    .values({
      environment: scope.environment,
      fund_provider_id: scope.fundProviderId,
      donor_account_id: donorAccountId,
      name,
      metadata: '{}',
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function insertGrantRequest(db: Executor, values: Insertable<GrantRequestsTable>) {
  return db.insertInto('grant_requests').values(values).returningAll().executeTakeFirstOrThrow();
}

/** Applies a decision's changes (and stamps updated_at). */
export function updateGrantRequest(db: Executor, id: string, changes: GrantRequestChanges) {
  return db
    .updateTable('grant_requests')
    .set({ ...changes, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The account's requests that waited for its decision become pending; returns their ids. */
export function releaseAwaitingGrantRequests(db: Executor, donorAccountId: string) {
  return db
    .updateTable('grant_requests')
    .set({ status: 'pending', updated_at: new Date() })
    .where('donor_account_id', '=', donorAccountId)
    .where('status', '=', 'awaiting_account_decision')
    .returning('id')
    .execute();
}
