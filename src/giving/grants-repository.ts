import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { Environment, GrantsTable } from '../db/schema.js';
import type { GrantStatusesTable, RecurringGrantsTable, WorkflowSessionsTable } from '../db/schema-giving.js';

/** The captured grants' data (docs/giving.md, "Capturing grants"). */

export type GivingGrantRow = Selectable<GrantsTable>;
export type GrantStatusRow = Selectable<GrantStatusesTable>;
export type RecurringGrantRow = Selectable<RecurringGrantsTable>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The session's row, locked for its capture without waiting: a capture in progress on it makes
 * this throw lock_not_available (55P03), which the service answers 409.
 */
export function lockSessionNowait(db: Executor, id: string): Promise<Selectable<WorkflowSessionsTable> | undefined> {
  if (!UUID.test(id)) return Promise.resolve(undefined);
  return db.selectFrom('workflow_sessions').selectAll().where('id', '=', id).forUpdate().noWait().executeTakeFirst();
}

/** A connect with its recipient nonprofit's name and EIN, if it is the owner's in its environment. */
export function findOwnedConnectWithRecipient(db: Executor, scope: { organizationId: string; environment: Environment }, id: string) {
  return db
    .selectFrom('connects as c')
    .leftJoin('directory_organizations as d', 'd.id', 'c.recipient_organization_id')
    .select([
      'c.id',
      'c.organization_id',
      'c.environment',
      'c.active',
      'c.recipient_organization_id',
      'd.name as recipient_name',
      'd.ein as recipient_ein',
    ])
    .where('c.id', '=', id)
    .where('c.organization_id', '=', scope.organizationId)
    .where('c.environment', '=', scope.environment)
    .executeTakeFirst();
}

/** The member nonprofit of Almoner with this EIN, if any (a grant to it is paid directly). */
export function findMemberNonprofitByEin(db: Executor, ein: string) {
  return db.selectFrom('organizations').select(['id', 'name']).where('ein', '=', ein).where('kind', '=', 'nonprofit').executeTakeFirst();
}

export function insertGivingGrant(db: Executor, values: Insertable<GrantsTable>): Promise<GivingGrantRow> {
  return db.insertInto('grants').values(values).returningAll().executeTakeFirstOrThrow();
}

export function insertRecurringGrant(db: Executor, values: Insertable<RecurringGrantsTable>): Promise<RecurringGrantRow> {
  return db.insertInto('recurring_grants').values(values).returningAll().executeTakeFirstOrThrow();
}

/** Marks the session captured by its grant or recurring grant (the table's check allows one). */
export function markSessionCaptured(db: Executor, id: string, by: { grant_id: string } | { recurring_grant_id: string }) {
  return db
    .updateTable('workflow_sessions')
    .set({ ...by, captured_at: new Date() })
    .where('id', '=', id)
    .execute();
}

export function findGivingGrant(db: Executor, id: string): Promise<GivingGrantRow | undefined> {
  if (!UUID.test(id)) return Promise.resolve(undefined);
  return db.selectFrom('grants').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The grant's row locked for a change of status. */
export function lockGivingGrant(db: Executor, id: string): Promise<GivingGrantRow | undefined> {
  if (!UUID.test(id)) return Promise.resolve(undefined);
  return db.selectFrom('grants').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** The status histories of some grants, oldest first. */
export function statusesOfGrants(db: Executor, grantIds: readonly string[]): Promise<GrantStatusRow[]> {
  if (grantIds.length === 0) return Promise.resolve([]);
  return db.selectFrom('grant_statuses').selectAll().where('grant_id', 'in', grantIds).orderBy('created_at').orderBy('id').execute();
}

/** The member nonprofit of Almoner a connect's grants go to (by its recipient's EIN), if on Almoner. */
export function recipientMemberOfConnect(db: Executor, connectId: string) {
  return db
    .selectFrom('connects as c')
    .innerJoin('directory_organizations as d', 'd.id', 'c.recipient_organization_id')
    .innerJoin('organizations as o', (join) => join.onRef('o.ein', '=', 'd.ein').on('o.kind', '=', 'nonprofit'))
    .select(['o.id'])
    .where('c.id', '=', connectId)
    .executeTakeFirst();
}
