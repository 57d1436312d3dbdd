import { sql } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import type { MailItemStatus } from '../db/schema-gift.js';
import { newestFirstPage, type Cursor } from '../db/keyset.js';
import { runPrepared } from '../db/prepared-statements.js';

/** Mail items as the API reads them (docs/gift-processing.md, "The API"); ingestion writes them. */

export type Scope = { organizationId: string; environment: Environment };

export interface MailItemFilters {
  lockboxId?: string;
  statuses?: MailItemStatus[];
  createdAfter?: Date;
  createdBefore?: Date;
}

const MAIL_ITEM_COLUMNS = ['id', 'lockbox_id', 'status', 'received_at', 'created_at', 'updated_at'] as const;

export function findMailItem(db: Executor, scope: Scope, id: string) {
  return db
    .selectFrom('mail_items')
    .select(MAIL_ITEM_COLUMNS)
    .where('id', '=', id)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .executeTakeFirst();
}

/** Newest first, keyset-paged (mail_items_page_idx); prepared, as the donations list is: each combination of filters is one text (at most 32). */
export function listMailItems(db: Executor, scope: Scope, filters: MailItemFilters, cursor: Cursor | undefined, limit: number) {
  const { lockboxId, statuses, createdAfter, createdBefore } = filters;
  const query = db
    .selectFrom('mail_items')
    .select(MAIL_ITEM_COLUMNS)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .$if(lockboxId !== undefined, (q) => q.where('lockbox_id', '=', lockboxId!))
    .$if(Boolean(statuses?.length), (q) => q.where('status', '=', sql<MailItemStatus>`any(${statuses}::text[])`))
    .$if(createdAfter !== undefined, (q) => q.where('created_at', '>', createdAfter!))
    .$if(createdBefore !== undefined, (q) => q.where('created_at', '<', createdBefore!));
  return runPrepared(db, 'gift_mail_items_page', newestFirstPage(query, cursor, limit));
}

/** The scans of some mail items, newest first per item, in one query. */
export function scansOf(db: Executor, mailItemIds: readonly string[]) {
  if (mailItemIds.length === 0) return Promise.resolve([]);
  const query = db
    .selectFrom('mail_item_scans')
    .select(['mail_item_id', 'file_id', 'created_at'])
    .where('mail_item_id', '=', sql<string>`any(${mailItemIds}::text[])`)
    .orderBy('mail_item_id')
    .orderBy('created_at', 'desc')
    .orderBy('file_id', 'desc');
  return runPrepared(db, 'gift_mail_item_scans', query);
}
