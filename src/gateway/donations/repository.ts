import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.js';
import { preparedStatement, runPrepared, type PreparedStatement } from '../../db/prepared-statements.js';
import type { DonationsTable, Environment } from '../../db/schema.js';
import type { Cursor } from '../../db/keyset.js';

export interface DonationFilters {
  paymentSourceIds?: string[];
  depositId?: string;
  dafpayTrackingId?: string;
  createdAfter?: Date;
  createdBefore?: Date;
}

/** The columns a donation's API shape is made of (the list reads no others). */
export const DONATION_VIEW_COLUMNS = ['id', 'external_id', 'payment_source_id', 'amount_gross', 'amount_net', 'amount_fee', 'currency', 'purpose', 'note', 'primary_donor', 'payment_status', 'created_at', 'updated_at', 'canceled_at'] as const;
export type DonationRow = Pick<Selectable<DonationsTable>, (typeof DONATION_VIEW_COLUMNS)[number]>;
const COLUMNS = DONATION_VIEW_COLUMNS.join(', ');

/** The optional conditions, in the order they appear in the statement and its parameters. */
const CONDITIONS: readonly { value: (f: DonationFilters, c: Cursor | undefined) => unknown[] | undefined; sql: (i: number) => string }[] = [
  { value: (f) => (f.paymentSourceIds?.length ? [f.paymentSourceIds] : undefined), sql: (i) => `payment_source_id = any($${i}::text[])` },
  { value: (f) => (f.depositId ? [f.depositId] : undefined), sql: (i) => `deposit_id = $${i}` },
  { value: (f) => (f.dafpayTrackingId ? [f.dafpayTrackingId] : undefined), sql: (i) => `dafpay_tracking_id = $${i}` },
  { value: (f) => (f.createdAfter ? [f.createdAfter] : undefined), sql: (i) => `created_at > $${i}` },
  { value: (f) => (f.createdBefore ? [f.createdBefore] : undefined), sql: (i) => `created_at < $${i}` },
  { value: (_, c) => (c ? [c.createdAt, c.id] : undefined), sql: (i) => `(created_at, id) < ($${i}, $${i + 1})` },
];

/**
 * The list query is the gateway's hottest statement: one prepared statement per combination
 * of conditions (at most 64), built once, instead of a query builder run on every call.
 */
const pageStatements = new Map<number, PreparedStatement<DonationRow>>();

function pageStatement(shape: number): PreparedStatement<DonationRow> {
  let statement = pageStatements.get(shape);
  if (!statement) {
    const where = ['organization_id = $1', 'environment = $2'];
    let next = 3;
    CONDITIONS.forEach((condition, bit) => {
      if (!(shape & (1 << bit))) return;
      where.push(condition.sql(next));
      next += bit === CONDITIONS.length - 1 ? 2 : 1;
    });
    const text = `select ${COLUMNS} from donations where ${where.join(' and ')} order by created_at desc, id desc limit $${next}`;
    statement = preparedStatement<DonationRow>(`gateway_donations_page_${shape}`, text);
    pageStatements.set(shape, statement);
  }
  return statement;
}

/** One organization's donations in one environment, newest first, keyset-paged (index donations_page_idx). */
export function listDonations(db: Db, scope: { organizationId: string; environment: Environment }, filters: DonationFilters, cursor: Cursor | undefined, limit: number): Promise<DonationRow[]> {
  const params: unknown[] = [scope.organizationId, scope.environment];
  let shape = 0;
  CONDITIONS.forEach((condition, bit) => {
    const values = condition.value(filters, cursor);
    if (values === undefined) return;
    shape |= 1 << bit;
    params.push(...values);
  });
  params.push(limit + 1);
  return runPrepared(db, pageStatement(shape), params);
}

export function findDonation(db: Db, scope: { organizationId: string; environment: Environment }, id: string): Promise<DonationRow | undefined> {
  return db.selectFrom('donations').select(DONATION_VIEW_COLUMNS).where('id', '=', id).where('organization_id', '=', scope.organizationId).where('environment', '=', scope.environment).executeTakeFirst();
}
