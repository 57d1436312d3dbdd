import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/database.js';
import { runPrepared } from '../../db/prepared-statements.js';
import type { DonationsTable, Environment } from '../../db/schema.js';
import { newestFirstPage, type Cursor } from '../../db/keyset.js';

export interface DonationFilters {
  paymentSourceIds?: string[];
  depositId?: string;
  dafpayTrackingId?: string;
  createdAfter?: Date;
  createdBefore?: Date;
}

/** The columns a donation's API shape is made of (the list reads no others). */
export const DONATION_VIEW_COLUMNS = [
  'id',
  'external_id',
  'payment_source_id',
  'amount_gross',
  'amount_net',
  'amount_fee',
  'currency',
  'purpose',
  'note',
  'primary_donor',
  'payment_status',
  'created_at',
  'updated_at',
  'canceled_at',
  // The 2026-04-01 shape's parts (docs/gift-processing.md, "The API").
  'deposit_id',
  'individual_gift_amount',
  'joint_donor',
  'initiation',
  'donor_advised_fund_grant',
  'platform',
  'corporate_match',
  'settlement_received_at',
  'settlement_settled_at',
] as const;
export type DonationRow = Pick<Selectable<DonationsTable>, (typeof DONATION_VIEW_COLUMNS)[number]>;
/**
 * One organization's donations in one environment, newest first, keyset-paged (index
 * donations_page_idx). The gateway's hottest statement, so it runs prepared: each
 * combination of filters is one text (at most 64), the values its parameters.
 */
export function listDonations(
  db: Db,
  scope: { organizationId: string; environment: Environment },
  filters: DonationFilters,
  cursor: Cursor | undefined,
  limit: number,
): Promise<DonationRow[]> {
  const { paymentSourceIds, depositId, dafpayTrackingId, createdAfter, createdBefore } = filters;
  const filtered = db
    .selectFrom('donations')
    .select(DONATION_VIEW_COLUMNS)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    // = any(array) keeps one text whatever the number of ids (an `in` list would not).
    .$if(Boolean(paymentSourceIds?.length), (q) => q.where('payment_source_id', '=', sql<string>`any(${paymentSourceIds}::text[])`))
    .$if(depositId !== undefined, (q) => q.where('deposit_id', '=', depositId!))
    .$if(dafpayTrackingId !== undefined, (q) => q.where('dafpay_tracking_id', '=', dafpayTrackingId!))
    .$if(createdAfter !== undefined, (q) => q.where('created_at', '>', createdAfter!))
    .$if(createdBefore !== undefined, (q) => q.where('created_at', '<', createdBefore!));
  return runPrepared(db, 'gateway_donations_page', newestFirstPage(filtered, cursor, limit));
}

export function findDonation(
  db: Db,
  scope: { organizationId: string; environment: Environment },
  id: string,
): Promise<DonationRow | undefined> {
  return db
    .selectFrom('donations')
    .select(DONATION_VIEW_COLUMNS)
    .where('id', '=', id)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .executeTakeFirst();
}
