import { recordAudit } from '../audit/audit-log.js';
import type { Db } from '../db/database.js';
import { inTransaction } from '../db/executor.js';
import { prefixedId } from '../db/ids.js';
import type { Cursor } from '../db/keyset.js';
import type { Environment } from '../db/schema.js';
import type { PropertyResourceType, PropertyType, PropertyValueJson } from '../db/schema-gift.js';
import { invalid, notFound } from '../errors/domain-error.js';
import { mapUniqueViolation } from '../errors/unique-violation.js';
import { emitEvent } from '../webhooks/outbox.js';
import {
  assignmentsOf,
  countEnumOptions,
  countMembers,
  deleteAssignments,
  findProperty,
  insertProperty,
  insertPropertyOptions,
  listEnumOptions,
  listMemberOptions,
  listProperties,
  type OptionCursor,
  isEnumOption,
  isMember,
  ownedResourceIds,
  touchResources,
  upsertAssignments,
  type Scope,
} from './properties-repository.js';

export type { OptionCursor, Scope as PropertyScope };

/** At most this many resources per assignment (the published assignProperty). */
export const MAX_ASSIGN_RESOURCES = 100;

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The field of a PropertyValue that carries each property type's value. */
const VALUE_FIELD = {
  text: 'text_value',
  enum: 'enum_value_id',
  user: 'user_value_id',
  boolean: 'boolean_value',
  date: 'date_value',
} as const;

/**
 * Sets (or, with `empty: true`, removes) one property's value on up to 100 of the scope's
 * donations or deposits, all or nothing (docs/gift-processing.md, "The API", Assigning a
 * property). Each resource whose value changed gets a `donation.updated` or `deposit.updated`
 * event in the same transaction. Returns how many resources changed.
 *
 * Errors: the property not the scope's, or an id not one of the scope's resources → not found;
 * too many or no ids, an id of another resource type, a value of another type or without its
 * field, an unknown option or user, a malformed date → invalid.
 */
export async function assignPropertyValue(
  db: Db,
  scope: Scope,
  propertyId: string,
  value: PropertyValueJson,
  resourceIds: readonly string[],
): Promise<number> {
  const property = await findProperty(db, scope, propertyId);
  if (!property) throw notFound('The property was not found.');
  const ids = [...new Set(resourceIds)];
  if (ids.length === 0) throw invalid('resources.ids must name at least one resource.');
  if (resourceIds.length > MAX_ASSIGN_RESOURCES) throw invalid(`resources.ids names at most ${MAX_ASSIGN_RESOURCES} resources at a time.`);
  const prefix = `${property.resource_type}_`;
  const foreign = ids.find((id) => !id.startsWith(prefix));
  if (foreign !== undefined)
    throw invalid(`${foreign} is not a ${property.resource_type}: this property is assigned to ${property.resource_type}s only.`);
  if (value.type !== property.property_type)
    throw invalid(`value.type must be ${property.property_type}, the type of this property (not ${String(value.type)}).`);
  const stored = value.empty === true ? undefined : await checkedValue(db, scope, property.id, property.property_type, value);

  return inTransaction(db, async (trx) => {
    const owned = await ownedResourceIds(trx, scope, property.resource_type, ids);
    const missing = ids.find((id) => !owned.has(id));
    if (missing !== undefined) throw notFound(`The ${property.resource_type} ${missing} was not found.`);
    const changed = stored
      ? await upsertAssignments(trx, property.id, property.resource_type, ids, stored)
      : await deleteAssignments(trx, property.id, ids);
    await touchResources(trx, property.resource_type, changed);
    for (const id of changed) {
      await emitEvent(trx, {
        environment: scope.environment,
        organizationId: scope.organizationId,
        category: `${property.resource_type}.updated`,
        objectId: id,
        objectType: property.resource_type,
      });
    }
    return changed.length;
  });
}

/** The value as stored: its type and the one field of that type, checked. */
async function checkedValue(
  db: Db,
  scope: Scope,
  propertyId: string,
  type: PropertyValueJson['type'],
  value: PropertyValueJson,
): Promise<PropertyValueJson> {
  const field = VALUE_FIELD[type];
  const given = value[field];
  if (given === undefined || given === null)
    throw invalid(`value.${field} is required for a ${type} property (or empty: true to remove the value).`);
  switch (type) {
    case 'text':
      if (typeof given !== 'string' || given.length > 10_000)
        throw invalid('value.text_value must be a string of at most 10,000 characters.');
      return { type, text_value: given };
    case 'boolean':
      if (typeof given !== 'boolean') throw invalid('value.boolean_value must be true or false.');
      return { type, boolean_value: given };
    case 'date':
      if (typeof given !== 'string' || !RFC3339.test(given) || Number.isNaN(Date.parse(given)))
        throw invalid('value.date_value must be an RFC 3339 date-time, e.g. 2026-04-01T00:00:00Z.');
      return { type, date_value: given };
    case 'enum':
      if (typeof given !== 'string' || !(await isEnumOption(db, propertyId, given)))
        throw invalid(`value.enum_value_id ${String(given)} is not an option of this property.`);
      return { type, enum_value_id: given };
    case 'user':
      if (typeof given !== 'string' || !UUID.test(given) || !(await isMember(db, scope.organizationId, given)))
        throw invalid(`value.user_value_id ${String(given)} is not a member of this organization.`);
      return { type, user_value_id: given.toLowerCase() };
  }
}

/** A resource's property value as served (the published PropertyAssignment). */
export interface AssignmentView {
  property_id: string;
  value: PropertyValueJson;
}

/** The property values of some resources (a page of donations or deposits), by resource id, in one query. */
export async function propertiesByResource(db: Db, resourceIds: readonly string[]): Promise<Map<string, AssignmentView[]>> {
  const byResource = new Map<string, AssignmentView[]>();
  if (resourceIds.length === 0) return byResource;
  for (const row of await assignmentsOf(db, resourceIds)) {
    const list = byResource.get(row.resource_id);
    const view = { property_id: row.property_id, value: row.value };
    if (list) list.push(view);
    else byResource.set(row.resource_id, [view]);
  }
  return byResource;
}

/** The first options a property's shape carries (the published Property: "the first 25 options"). */
export const PROPERTY_OPTIONS_SHOWN = 25;

export type PropertyRow = NonNullable<Awaited<ReturnType<typeof findProperty>>>;
export interface OptionView {
  id: string;
  name: string;
  description: string | null;
  key: string;
}
export interface PropertyView extends PropertyRow {
  /** Enum and user properties only. */
  options?: OptionView[];
  total_option_count?: number;
}

/** One page of an enum property's options or, for a user property, the organization's members; `limit + 1` rows. */
export function optionsPage(db: Db, property: PropertyRow, cursor: OptionCursor | undefined, limit: number): Promise<OptionView[]> {
  if (property.property_type === 'enum') return listEnumOptions(db, property.id, cursor, limit);
  if (property.property_type === 'user') return listMemberOptions(db, property.organization_id, cursor, limit);
  return Promise.resolve([]);
}

async function withOptions(db: Db, property: PropertyRow): Promise<PropertyView> {
  if (property.property_type !== 'enum' && property.property_type !== 'user') return property;
  const [page, total] = await Promise.all([
    optionsPage(db, property, undefined, PROPERTY_OPTIONS_SHOWN),
    property.property_type === 'enum' ? countEnumOptions(db, property.id) : countMembers(db, property.organization_id),
  ]);
  return { ...property, options: page.slice(0, PROPERTY_OPTIONS_SHOWN), total_option_count: total };
}

export async function propertyOf(db: Db, scope: Scope, id: string): Promise<PropertyView | undefined> {
  const property = await findProperty(db, scope, id);
  return property ? withOptions(db, property) : undefined;
}

/** A page of the nonprofit's properties, newest first, each with its first options. */
export async function propertiesPage(
  db: Db,
  scope: Scope,
  filters: { resourceType?: PropertyResourceType },
  cursor: Cursor | undefined,
  limit: number,
): Promise<PropertyView[]> {
  const rows = await listProperties(db, scope, filters, cursor, limit);
  return Promise.all(rows.map((row) => withOptions(db, row)));
}

/** The property the options page is of, or undefined when it is not the scope's. */
export function propertyForOptions(db: Db, scope: Scope, id: string): Promise<PropertyRow | undefined> {
  return findProperty(db, scope, id);
}

export interface NewProperty {
  organizationId: string;
  environment: Environment;
  name: string;
  resourceType: PropertyResourceType;
  propertyType: PropertyType;
  /** An enum property's options, in order. */
  options?: readonly string[];
  /** Who adds it, for the audit row (`property.created`). */
  via: 'admin_cli';
}

/** Adds a property (the admin CLI), audited; an enum property needs its options, other types take none. */
export async function addProperty(db: Db, input: NewProperty): Promise<{ property: PropertyRow; options: string[] }> {
  const name = input.name.trim();
  if (name === '' || name.length > 200) throw invalid('The name must be 1 to 200 characters.');
  const options = (input.options ?? []).map((o) => o.trim());
  if (input.propertyType === 'enum' && options.length === 0) throw invalid('An enum property needs at least one --option.');
  if (input.propertyType !== 'enum' && options.length > 0) throw invalid('Only an enum property takes options.');
  if (options.some((o) => o === '' || o.length > 200)) throw invalid('Each option must be 1 to 200 characters.');
  if (new Set(options).size !== options.length) throw invalid('The options must differ.');
  return inTransaction(db, async (trx) => {
    let property: PropertyRow;
    try {
      property = await insertProperty(trx, {
        id: prefixedId('prop'),
        environment: input.environment,
        organization_id: input.organizationId,
        name,
        resource_type: input.resourceType,
        property_type: input.propertyType,
      });
    } catch (error) {
      mapUniqueViolation(error, { properties_name_key: `The organization already has a ${input.resourceType} property named ${name}.` });
    }
    const rows = await insertPropertyOptions(trx, property.id, options, () => prefixedId('propopt'));
    await recordAudit(trx, {
      event: 'property.created',
      environment: input.environment,
      organizationId: input.organizationId,
      details: { property_id: property.id, name, resource_type: input.resourceType, property_type: input.propertyType, via: input.via },
    });
    return { property, options: rows.map((r) => r.id) };
  });
}
