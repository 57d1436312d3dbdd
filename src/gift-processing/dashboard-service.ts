import type { Db } from '../db/database.js';
import type { Cursor } from '../db/keyset.js';
import type { DonorJson } from '../db/schema.js';
import {
  MAIL_ITEM_STATUSES,
  type DepositStatus,
  type MailItemStatus,
  type PostalAddressJson,
  type PropertyType,
  type PropertyValueJson,
  type ScanImageLabel,
} from '../db/schema-gift.js';
import { invalid } from '../errors/domain-error.js';
import { centsOf } from '../ledger/ledger.js';
import {
  assignmentsOf,
  depositOfMailItem,
  depositRow,
  depositRows,
  donationsOf,
  lockboxesOf,
  pageCursor,
  mailItemRow,
  mailItemRows,
  propertiesOf,
  scanImageOf,
  scanImagesOfMailItem,
  userEmails,
  type GiftScope,
  type MailFilters,
} from './dashboard-repository.js';

/**
 * The dashboard's gift-processing pages (docs/gift-processing.md, "On the dashboard"): a
 * nonprofit's deposits and mail items, read-only, in the dashboard's environment. Changing a
 * property's value goes through properties-service.ts, as the API's assignment does.
 */

export type { GiftScope, MailFilters };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface GiftPage<T> {
  rows: T[];
  /** The id the next (older) page starts after, when there is one. */
  older: string | undefined;
}

async function cursorOf(
  find: (id: string) => Promise<{ id: string; createdAt: Date } | undefined>,
  before: string | undefined,
): Promise<Cursor | undefined> {
  if (before === undefined) return undefined;
  const row = before.length <= 100 ? await find(before) : undefined;
  if (!row) throw invalid('before: not a row of this list');
  return row;
}

function paged<R extends { id: string }, T>(rows: R[], limit: number, view: (row: R) => T): GiftPage<T> {
  const shown = rows.slice(0, limit);
  return { rows: shown.map(view), older: rows.length > limit ? shown[shown.length - 1]!.id : undefined };
}

export interface DepositSummary {
  id: string;
  amount: number;
  status: DepositStatus;
  sourceName: string;
  settledAt: Date | null;
  createdAt: Date;
  donations: number;
  mailItemId: string | null;
  description: string | null;
}

const depositView = (r: Awaited<ReturnType<typeof depositRows>>[number]): DepositSummary => ({
  id: r.id,
  amount: centsOf(r.amount),
  status: r.status,
  sourceName: r.source_name,
  settledAt: r.settled_at,
  createdAt: r.created_at,
  donations: Number(r.donations),
  mailItemId: r.mail_item_id,
  description: r.description,
});

export async function depositsPage(db: Db, scope: GiftScope, before: string | undefined, limit: number): Promise<GiftPage<DepositSummary>> {
  const cursor = await cursorOf((id) => pageCursor(db, 'deposits', scope, id), before);
  return paged(await depositRows(db, scope, cursor, limit), limit, depositView);
}

function donorName(donor: DonorJson | null): string {
  if (!donor) return '';
  return donor.full_name ?? [donor.first_name, donor.last_name].filter(Boolean).join(' ');
}

/** A property of the nonprofit, with its value on one resource (undefined: none assigned). */
export interface PropertyWithValue {
  id: string;
  name: string;
  type: PropertyType;
  options: { id: string; name: string }[];
  value: PropertyValueJson | undefined;
}

async function withValues(db: Db, scope: GiftScope, resourceType: 'donation' | 'deposit', resourceIds: readonly string[]) {
  const properties = await propertiesOf(db, scope, resourceType);
  const assignments = await assignmentsOf(db, resourceIds);
  const userIds = assignments.flatMap((a) => (a.value.user_value_id && UUID.test(a.value.user_value_id) ? [a.value.user_value_id] : []));
  const members = await userEmails(db, [...new Set(userIds)]);
  return (resourceId: string): PropertyWithValue[] =>
    properties.map((p) => ({
      id: p.id,
      name: p.name,
      type: p.property_type,
      // A user property's options are the members named by its values.
      options:
        p.property_type === 'user' ? members.map((m) => ({ id: m.id, name: m.email })) : p.options.map((o) => ({ id: o.id, name: o.name })),
      value: assignments.find((a) => a.property_id === p.id && a.resource_id === resourceId)?.value,
    }));
}

async function donationLines(db: Db, scope: GiftScope, by: { mailItemId: string } | { depositId: string }) {
  const rows = await donationsOf(db, scope, by);
  const properties = await withValues(
    db,
    scope,
    'donation',
    rows.map((r) => r.id),
  );
  return rows.map((r) => ({
    id: r.id,
    amount: centsOf(r.amount_gross),
    donor: donorName(r.primary_donor),
    memo: r.note,
    purpose: r.purpose,
    properties: properties(r.id),
  }));
}

/** A deposit of the nonprofit with its donations and properties; undefined when it is not one of its own. */
export async function depositDetail(db: Db, scope: GiftScope, id: string) {
  const row = id.length <= 100 ? await depositRow(db, scope, id) : undefined;
  if (!row) return undefined;
  const properties = await withValues(db, scope, 'deposit', [row.id]);
  return {
    deposit: depositView(row),
    donations: await donationLines(db, scope, { depositId: row.id }),
    properties: properties(row.id),
  };
}

export interface MailItemSummary {
  id: string;
  status: MailItemStatus;
  envelopeId: string;
  receivedAt: Date;
  lockbox: { id: string; locationId: string; address: PostalAddressJson };
  donations: number;
  firstImageId: string | null;
  reviewLine: number | null;
  reviewReason: string | null;
}

const mailItemView = (r: Awaited<ReturnType<typeof mailItemRows>>[number]): MailItemSummary => ({
  id: r.id,
  status: r.status,
  envelopeId: r.envelope_id,
  receivedAt: r.received_at,
  lockbox: { id: r.lockbox_id, locationId: r.location_id, address: r.address },
  donations: Number(r.donations),
  firstImageId: r.first_image_id,
  reviewLine: r.review_line,
  reviewReason: r.review_reason,
});

export function isMailItemStatus(value: unknown): value is MailItemStatus {
  return (MAIL_ITEM_STATUSES as readonly unknown[]).includes(value);
}

/** The nonprofit's mail items (filtered by lockbox and status), newest first, and its lockboxes for the filter. */
export async function mailItemsPage(db: Db, scope: GiftScope, filters: MailFilters, before: string | undefined, limit: number) {
  const lockboxes = await lockboxesOf(db, scope);
  if (filters.lockboxId && !lockboxes.some((l) => l.id === filters.lockboxId)) throw invalid('lockbox: not one of your lockboxes');
  const cursor = await cursorOf((id) => pageCursor(db, 'mail_items', scope, id), before);
  const page = paged(await mailItemRows(db, scope, filters, cursor, limit), limit, mailItemView);
  return { ...page, lockboxes: lockboxes.map((l) => ({ id: l.id, locationId: l.location_id, address: l.address })) };
}

export interface ScanView {
  fileId: string;
  scannedAt: Date;
  images: { id: string; label: ScanImageLabel; width: number | null; height: number | null }[];
}

/** A mail item of the nonprofit with its scans (newest first), donations and deposit; undefined when it is not one of its own. */
export async function mailItemDetail(db: Db, scope: GiftScope, id: string) {
  const row = id.length <= 100 ? await mailItemRow(db, scope, id) : undefined;
  if (!row) return undefined;
  const scans: ScanView[] = [];
  for (const image of await scanImagesOfMailItem(db, row.id)) {
    let scan = scans.at(-1);
    if (scan?.fileId !== image.file_id) {
      scan = { fileId: image.file_id, scannedAt: image.scanned_at, images: [] };
      scans.push(scan);
    }
    scan.images.push({ id: image.id, label: image.label, width: image.width, height: image.height });
  }
  const deposit = await depositOfMailItem(db, scope, row.id);
  return {
    item: mailItemView(row),
    scans,
    donations: await donationLines(db, scope, { mailItemId: row.id }),
    deposit: deposit ? depositView(deposit) : undefined,
  };
}

/** A scan image of the nonprofit's mail (undefined: unknown, or another organization's). */
export function scanImage(db: Db, scope: GiftScope, imageId: string) {
  return imageId.length <= 100 ? scanImageOf(db, scope, imageId) : Promise.resolve(undefined);
}
