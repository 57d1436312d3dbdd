import type { Db } from '../../db/database.js';
import type { Cursor } from '../../db/keyset.js';
import type { Environment } from '../../db/schema.js';
import { findDonation, listDonations, type DonationFilters, type DonationRow } from './repository.js';

export type { DonationRow };

/** The caller: the authorizing nonprofit in one environment. */
type Scope = { organizationId: string; environment: Environment };

/** A page of the caller's donations, filtered, newest first. */
export function donationsPage(
  db: Db,
  scope: Scope,
  filters: DonationFilters,
  cursor: Cursor | undefined,
  limit: number,
): Promise<DonationRow[]> {
  return listDonations(db, scope, filters, cursor, limit);
}

/** One of the caller's donations, or undefined. */
export function donationOf(db: Db, scope: Scope, id: string): Promise<DonationRow | undefined> {
  return findDonation(db, scope, id);
}
