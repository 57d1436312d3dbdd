import type { Db } from '../../db/database.js';
import type { Environment } from '../../db/schema.js';
import { beforeCursor, type Cursor } from '../pagination.js';

export interface DonationFilters {
  paymentSourceIds?: string[];
  depositId?: string;
  dafpayTrackingId?: string;
  createdAfter?: Date;
  createdBefore?: Date;
}

/** One organization's donations in one environment, newest first, keyset-paged (index donations_page_idx). */
export function listDonations(db: Db, scope: { organizationId: string; environment: Environment }, filters: DonationFilters, cursor: Cursor | undefined, limit: number) {
  let query = db
    .selectFrom('donations')
    .selectAll()
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment);
  if (filters.paymentSourceIds?.length) query = query.where('payment_source_id', 'in', filters.paymentSourceIds);
  if (filters.depositId) query = query.where('deposit_id', '=', filters.depositId);
  if (filters.dafpayTrackingId) query = query.where('dafpay_tracking_id', '=', filters.dafpayTrackingId);
  if (filters.createdAfter) query = query.where('created_at', '>', filters.createdAfter);
  if (filters.createdBefore) query = query.where('created_at', '<', filters.createdBefore);
  if (cursor) {
    query = query.where(beforeCursor(cursor));
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit + 1).execute();
}

export function findDonation(db: Db, scope: { organizationId: string; environment: Environment }, id: string) {
  return db.selectFrom('donations').selectAll().where('id', '=', id).where('organization_id', '=', scope.organizationId).where('environment', '=', scope.environment).executeTakeFirst();
}
