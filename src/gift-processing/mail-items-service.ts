import type { Db } from '../db/database.js';
import type { Cursor } from '../db/keyset.js';
import { findMailItem, listMailItems, scansOf, type MailItemFilters, type Scope } from './mail-items-repository.js';

export type { MailItemFilters };

export interface MailItemView {
  id: string;
  lockbox_id: string;
  status: string;
  received_at: Date;
  created_at: Date;
  updated_at: Date;
  /** Newest first. */
  scans: { file_id: string; created_at: Date }[];
}

async function withScans(db: Db, rows: Omit<MailItemView, 'scans'>[]): Promise<MailItemView[]> {
  const scans = await scansOf(
    db,
    rows.map((r) => r.id),
  );
  const byItem = new Map<string, MailItemView['scans']>();
  for (const scan of scans) {
    const list = byItem.get(scan.mail_item_id) ?? [];
    list.push({ file_id: scan.file_id, created_at: scan.created_at });
    byItem.set(scan.mail_item_id, list);
  }
  return rows.map((row) => ({ ...row, scans: byItem.get(row.id) ?? [] }));
}

/** A page of the nonprofit's mail items with their scans (two queries), newest first. */
export async function mailItemsPage(
  db: Db,
  scope: Scope,
  filters: MailItemFilters,
  cursor: Cursor | undefined,
  limit: number,
): Promise<MailItemView[]> {
  const rows = await listMailItems(db, scope, filters, cursor, limit);
  // The row past the page (a next page's sign) needs no scans: listPage drops it.
  return [...(await withScans(db, rows.slice(0, limit))), ...rows.slice(limit).map((row) => ({ ...row, scans: [] }))];
}

export async function mailItemOf(db: Db, scope: Scope, id: string): Promise<MailItemView | undefined> {
  const row = await findMailItem(db, scope, id);
  return row ? (await withScans(db, [row]))[0] : undefined;
}
