import { sql } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { Cursor } from '../db/keyset.js';
import type { Environment } from '../db/schema.js';
import type { MailItemStatus } from '../db/schema-gift.js';

/**
 * What the dashboard's gift-processing pages read (docs/gift-processing.md, "On the
 * dashboard"): one nonprofit's deposits and mail items in one environment, newest first, one
 * more than `limit` (so the caller knows whether an older page follows); a deposit or mail item
 * of that nonprofit with its donations, scans and images; the nonprofit's properties.
 */

export interface GiftScope {
  organizationId: string;
  environment: Environment;
}

const newestFirst = (alias: string, cursor: Cursor | undefined) =>
  cursor
    ? sql<boolean>`(${sql.ref(`${alias}.created_at`)}, ${sql.ref(`${alias}.id`)}) < (${cursor.createdAt}, ${cursor.id})`
    : sql<boolean>`true`;

/** Where a page starts: a deposit or mail item of the scope (undefined: not one of its list). */
export function pageCursor(db: Executor, table: 'deposits' | 'mail_items', scope: GiftScope, id: string) {
  return db
    .selectFrom(table)
    .select(['id', 'created_at as createdAt'])
    .where('id', '=', id)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .executeTakeFirst();
}

const donationCount = (column: 'deposit_id' | 'mail_item_id', ref: string) =>
  sql<string>`(select count(*) from donations dn where ${sql.ref(`dn.${column}`)} = ${sql.ref(ref)})`;

function depositsQuery(db: Executor, scope: GiftScope) {
  return db
    .selectFrom('deposits as d')
    .innerJoin('payment_sources as s', 's.id', 'd.payment_source_id')
    .select([
      'd.id',
      'd.amount',
      'd.status',
      'd.settled_at',
      'd.created_at',
      'd.mail_item_id',
      'd.description',
      'd.rail',
      's.name as source_name',
      donationCount('deposit_id', 'd.id').as('donations'),
    ])
    .where('d.organization_id', '=', scope.organizationId)
    .where('d.environment', '=', scope.environment);
}

export function depositRows(db: Executor, scope: GiftScope, cursor: Cursor | undefined, limit: number) {
  return depositsQuery(db, scope)
    .where(newestFirst('d', cursor))
    .orderBy('d.created_at', 'desc')
    .orderBy('d.id', 'desc')
    .limit(limit + 1)
    .execute();
}

export function depositRow(db: Executor, scope: GiftScope, id: string) {
  return depositsQuery(db, scope).where('d.id', '=', id).executeTakeFirst();
}

/** The deposit a mail item's checks made, when there is one. */
export function depositOfMailItem(db: Executor, scope: GiftScope, mailItemId: string) {
  return depositsQuery(db, scope).where('d.mail_item_id', '=', mailItemId).executeTakeFirst();
}

export interface MailFilters {
  lockboxId?: string | undefined;
  status?: MailItemStatus | undefined;
}

function mailItemsQuery(db: Executor, scope: GiftScope) {
  return db
    .selectFrom('mail_items as m')
    .innerJoin('lockboxes as l', 'l.id', 'm.lockbox_id')
    .select([
      'm.id',
      'm.status',
      'm.envelope_id',
      'm.review_line',
      'm.review_reason',
      'm.received_at',
      'm.created_at',
      'l.id as lockbox_id',
      'l.location_id',
      'l.address',
      donationCount('mail_item_id', 'm.id').as('donations'),
      // The first image of the newest scan: the list's thumbnail.
      sql<string | null>`(select i.id from mail_item_scans sc join scan_images i on i.file_id = sc.file_id
        where sc.mail_item_id = m.id order by sc.created_at desc, sc.file_id desc, i.position asc limit 1)`.as('first_image_id'),
    ])
    .where('m.organization_id', '=', scope.organizationId)
    .where('m.environment', '=', scope.environment);
}

export function mailItemRows(db: Executor, scope: GiftScope, filters: MailFilters, cursor: Cursor | undefined, limit: number) {
  let query = mailItemsQuery(db, scope);
  if (filters.lockboxId) query = query.where('m.lockbox_id', '=', filters.lockboxId);
  if (filters.status) query = query.where('m.status', '=', filters.status);
  return query
    .where(newestFirst('m', cursor))
    .orderBy('m.created_at', 'desc')
    .orderBy('m.id', 'desc')
    .limit(limit + 1)
    .execute();
}

export function mailItemRow(db: Executor, scope: GiftScope, id: string) {
  return mailItemsQuery(db, scope).where('m.id', '=', id).executeTakeFirst();
}

/** The nonprofit's lockboxes in the environment (the mail list's filter). */
export function lockboxesOf(db: Executor, scope: GiftScope) {
  return db
    .selectFrom('lockboxes')
    .select(['id', 'location_id', 'address'])
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .orderBy('location_id')
    .execute();
}

/** A mail item's scans, newest first, with their images in order. */
export function scanImagesOfMailItem(db: Executor, mailItemId: string) {
  return db
    .selectFrom('mail_item_scans as sc')
    .innerJoin('scan_images as i', 'i.file_id', 'sc.file_id')
    .select(['sc.file_id', 'sc.created_at as scanned_at', 'i.id', 'i.position', 'i.label', 'i.width', 'i.height'])
    .where('sc.mail_item_id', '=', mailItemId)
    .orderBy('sc.created_at', 'desc')
    .orderBy('sc.file_id', 'desc')
    .orderBy('i.position', 'asc')
    .execute();
}

/** The donations of a mail item or a deposit, in the order of the batch's lines. */
export function donationsOf(db: Executor, scope: GiftScope, by: { mailItemId: string } | { depositId: string }) {
  const query = db
    .selectFrom('donations')
    .select(['id', 'amount_gross', 'primary_donor', 'note', 'purpose', 'source_line', 'created_at'])
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment);
  return ('mailItemId' in by ? query.where('mail_item_id', '=', by.mailItemId) : query.where('deposit_id', '=', by.depositId))
    .orderBy('source_line', 'asc')
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
}

/** The nonprofit's properties on one resource type, with their enum options. */
export async function propertiesOf(db: Executor, scope: GiftScope, resourceType: 'donation' | 'deposit') {
  const properties = await db
    .selectFrom('properties')
    .select(['id', 'name', 'property_type'])
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where('resource_type', '=', resourceType)
    .orderBy('name')
    .execute();
  const options = properties.length
    ? await db
        .selectFrom('property_options')
        .select(['id', 'property_id', 'name'])
        .where(
          'property_id',
          'in',
          properties.map((p) => p.id),
        )
        .orderBy('position')
        .orderBy('id')
        .execute()
    : [];
  return properties.map((p) => ({ ...p, options: options.filter((o) => o.property_id === p.id) }));
}

/** The property values assigned to these resources. */
export function assignmentsOf(db: Executor, resourceIds: readonly string[]) {
  if (resourceIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('property_assignments')
    .select(['property_id', 'resource_id', 'value'])
    .where('resource_id', 'in', [...resourceIds])
    .execute();
}

/** The e-mail addresses of users (a user property's values name members). */
export function userEmails(db: Executor, userIds: readonly string[]) {
  if (userIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('users')
    .select(['id', 'email'])
    .where('id', 'in', [...userIds])
    .execute();
}

/** A scan image of the scope's mail items (undefined: unknown, or another organization's). */
export function scanImageOf(db: Executor, scope: GiftScope, imageId: string) {
  return db
    .selectFrom('scan_images as i')
    .innerJoin('mail_item_scans as sc', 'sc.file_id', 'i.file_id')
    .innerJoin('mail_items as m', 'm.id', 'sc.mail_item_id')
    .select(['i.id', 'i.storage_key', 'i.label'])
    .where('i.id', '=', imageId)
    .where('m.organization_id', '=', scope.organizationId)
    .where('m.environment', '=', scope.environment)
    .executeTakeFirst();
}
