import { sql, type Insertable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import type { PropertiesTable, PropertyResourceType, PropertyValueJson } from '../db/schema-gift.js';
import { newestFirstPage, type Cursor } from '../db/keyset.js';
import { runPrepared } from '../db/prepared-statements.js';

/** A nonprofit's properties, their options and their values on donations and deposits (docs/gift-processing.md, "The API"). */

export type Scope = { organizationId: string; environment: Environment };

export function insertProperty(db: Executor, values: Insertable<PropertiesTable>) {
  return db.insertInto('properties').values(values).returningAll().executeTakeFirstOrThrow();
}

export function insertPropertyOptions(db: Executor, propertyId: string, names: readonly string[], makeId: () => string) {
  if (names.length === 0) return Promise.resolve([]);
  return db
    .insertInto('property_options')
    .values(names.map((name, position) => ({ id: makeId(), property_id: propertyId, name, position })))
    .returningAll()
    .execute();
}

export function findProperty(db: Executor, scope: Scope, id: string) {
  return db
    .selectFrom('properties')
    .selectAll()
    .where('id', '=', id)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .executeTakeFirst();
}

export function listProperties(
  db: Executor,
  scope: Scope,
  filters: { resourceType?: PropertyResourceType },
  cursor: Cursor | undefined,
  limit: number,
) {
  const query = db
    .selectFrom('properties')
    .selectAll()
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .$if(filters.resourceType !== undefined, (q) => q.where('resource_type', '=', filters.resourceType!));
  return newestFirstPage(query, cursor, limit).execute();
}

/** An option page: a sort key (the enum option's position, or the member's join time) and the id after which to continue. */
export interface OptionCursor {
  key: string;
  id: string;
}

/** An enum property's options in their order, `limit + 1` of them from after `cursor`. */
export function listEnumOptions(db: Executor, propertyId: string, cursor: OptionCursor | undefined, limit: number) {
  return db
    .selectFrom('property_options')
    .select(['id', 'name', 'description', sql<string>`position::text`.as('key')])
    .where('property_id', '=', propertyId)
    .$if(cursor !== undefined, (q) => q.where(sql<boolean>`(position, id) > (${Number(cursor!.key)}, ${cursor!.id})`))
    .orderBy('position')
    .orderBy('id')
    .limit(limit + 1)
    .execute();
}

/** The organization's members as a user property's options, oldest membership first. */
export function listMemberOptions(db: Executor, organizationId: string, cursor: OptionCursor | undefined, limit: number) {
  return db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select([
      'users.id as id',
      sql<string>`coalesce(nullif(btrim(users.display_name), ''), users.email)`.as('name'),
      sql<string | null>`null`.as('description'),
      sql<string>`to_char(memberships.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('key'),
    ])
    .where('memberships.organization_id', '=', organizationId)
    .$if(cursor !== undefined, (q) =>
      q.where(sql<boolean>`(memberships.created_at, users.id::text) > (${cursor!.key}::timestamptz, ${cursor!.id})`),
    )
    .orderBy('memberships.created_at')
    .orderBy(sql`users.id::text`)
    .limit(limit + 1)
    .execute();
}

export async function countEnumOptions(db: Executor, propertyId: string): Promise<number> {
  const row = await db
    .selectFrom('property_options')
    .select(sql<string>`count(*)`.as('n'))
    .where('property_id', '=', propertyId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function countMembers(db: Executor, organizationId: string): Promise<number> {
  const row = await db
    .selectFrom('memberships')
    .select(sql<string>`count(*)`.as('n'))
    .where('organization_id', '=', organizationId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function isEnumOption(db: Executor, propertyId: string, optionId: string): Promise<boolean> {
  const row = await db
    .selectFrom('property_options')
    .select('id')
    .where('property_id', '=', propertyId)
    .where('id', '=', optionId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function isMember(db: Executor, organizationId: string, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('memberships')
    .select('user_id')
    .where('organization_id', '=', organizationId)
    .where(sql<boolean>`user_id::text = ${userId}`)
    .executeTakeFirst();
  return row !== undefined;
}

/** Which of `ids` are the scope's donations or deposits. */
export async function ownedResourceIds(db: Executor, scope: Scope, resourceType: PropertyResourceType, ids: readonly string[]) {
  const table = resourceType === 'donation' ? 'donations' : 'deposits';
  const rows = await db
    .selectFrom(table)
    .select('id')
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where('id', '=', sql<string>`any(${ids}::text[])`)
    .execute();
  return new Set(rows.map((r) => r.id));
}

/**
 * Sets the property's value on the resources, returning those whose value changed (an equal
 * value again is no update).
 */
export async function upsertAssignments(
  db: Executor,
  propertyId: string,
  resourceType: PropertyResourceType,
  ids: readonly string[],
  value: PropertyValueJson,
): Promise<string[]> {
  const rows = await db
    .insertInto('property_assignments')
    .values(ids.map((id) => ({ property_id: propertyId, resource_type: resourceType, resource_id: id, value: JSON.stringify(value) })))
    .onConflict((oc) =>
      oc
        .columns(['property_id', 'resource_id'])
        .doUpdateSet({ value: sql`excluded.value`, updated_at: sql`now()` })
        .where(sql<boolean>`property_assignments.value is distinct from excluded.value`),
    )
    .returning('resource_id')
    .execute();
  return rows.map((r) => r.resource_id);
}

/** Removes the property's value from the resources, returning those that had one. */
export async function deleteAssignments(db: Executor, propertyId: string, ids: readonly string[]): Promise<string[]> {
  const rows = await db
    .deleteFrom('property_assignments')
    .where('property_id', '=', propertyId)
    .where('resource_id', '=', sql<string>`any(${ids}::text[])`)
    .returning('resource_id')
    .execute();
  return rows.map((r) => r.resource_id);
}

/** Marks the resources updated (their updated_at), as a changed property value changes them. */
export async function touchResources(db: Executor, resourceType: PropertyResourceType, ids: readonly string[]) {
  if (ids.length === 0) return;
  const table = resourceType === 'donation' ? 'donations' : 'deposits';
  await db
    .updateTable(table)
    .set({ updated_at: new Date() })
    .where('id', '=', sql<string>`any(${ids}::text[])`)
    .execute();
}

/**
 * The property assignments of some resources (one page of donations or deposits), in one query.
 * Prepared: the donations list runs it on every page (one text whatever the number of ids).
 */
export function assignmentsOf(db: Executor, resourceIds: readonly string[]) {
  const query = db
    .selectFrom('property_assignments')
    .select(['resource_id', 'property_id', 'value'])
    .where('resource_id', '=', sql<string>`any(${resourceIds}::text[])`)
    .orderBy('resource_id')
    .orderBy('property_id');
  return runPrepared(db, 'gift_property_assignments', query);
}
