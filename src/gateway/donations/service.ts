import type { Db } from '../../db/database.js';
import type { Cursor } from '../../db/keyset.js';
import type { Environment } from '../../db/schema.js';
import { propertiesByResource, type AssignmentView } from '../../gift-processing/properties-service.js';
import { findDonation, listDonations, type DonationFilters, type DonationRow as DonationColumns } from './repository.js';

/** A donation's columns and its property values. */
export type DonationRow = DonationColumns & { properties: AssignmentView[] };
const NONE: AssignmentView[] = [];

/** The caller: the authorizing nonprofit in one environment. */
type Scope = { organizationId: string; environment: Environment };

/**
 * A page of the caller's donations, filtered, newest first, with their property values: one more
 * query, for the page's ids only (the list is benchmarked: docs/gift-processing.md, "The API").
 */
export async function donationsPage(
  db: Db,
  scope: Scope,
  filters: DonationFilters,
  cursor: Cursor | undefined,
  limit: number,
): Promise<DonationRow[]> {
  const rows = (await listDonations(db, scope, filters, cursor, limit)) as DonationRow[];
  // The rows include the one past the page (a next page's sign): its values are not needed.
  const properties = await propertiesByResource(
    db,
    rows.slice(0, limit).map((r) => r.id),
  );
  for (const row of rows) row.properties = properties.get(row.id) ?? NONE;
  return rows;
}

/** One of the caller's donations, or undefined. */
export async function donationOf(db: Db, scope: Scope, id: string): Promise<DonationRow | undefined> {
  const row = (await findDonation(db, scope, id)) as DonationRow | undefined;
  if (row) row.properties = (await propertiesByResource(db, [row.id])).get(row.id) ?? NONE;
  return row;
}
