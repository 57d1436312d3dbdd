import type { Insertable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import type { PaymentSourcesTable } from '../db/schema-gift.js';
import { newestFirstPage, type Cursor } from '../db/keyset.js';

/** Payment sources with what their published shape shows: the lockbox and the account's bank (docs/gift-processing.md, "The API"). */

export type Scope = { organizationId: string; environment: Environment };

export function insertPaymentSource(db: Executor, values: Insertable<PaymentSourcesTable>) {
  return db.insertInto('payment_sources').values(values).returningAll().executeTakeFirstOrThrow();
}

function withLockbox(db: Executor, scope: Scope) {
  return db
    .selectFrom('payment_sources as ps')
    .innerJoin('financial_accounts as fa', (join) =>
      join.onRef('fa.id', '=', 'ps.financial_account_id').onRef('fa.environment', '=', 'ps.environment'),
    )
    .leftJoin('lockboxes as lb', 'lb.payment_source_id', 'ps.id')
    .select([
      'ps.id',
      'ps.financial_account_id',
      'ps.name',
      'ps.source_type',
      'ps.ach_account_number',
      'ps.ach_routing_number',
      'ps.created_at',
      'ps.updated_at',
      'fa.bank_provider',
      'lb.id as lockbox_id',
      'lb.address as lockbox_address',
      'lb.location_id as lockbox_location_id',
      'lb.created_at as lockbox_created_at',
      'lb.updated_at as lockbox_updated_at',
    ])
    .where('ps.organization_id', '=', scope.organizationId)
    .where('ps.environment', '=', scope.environment);
}

export type PaymentSourceRow = NonNullable<Awaited<ReturnType<typeof findPaymentSource>>>;

export function findPaymentSource(db: Executor, scope: Scope, id: string) {
  return withLockbox(db, scope).where('ps.id', '=', id).executeTakeFirst();
}

/** Newest first, keyset-paged (payment_sources_page_idx). */
export function listPaymentSources(db: Executor, scope: Scope, cursor: Cursor | undefined, limit: number) {
  // A subquery, so the page's unqualified created_at and id (db/keyset.ts) name the source's.
  return newestFirstPage(db.selectFrom(withLockbox(db, scope).as('p')).selectAll(), cursor, limit).execute();
}
