import type { Db } from '../db/database.js';
import type { Cursor } from '../db/keyset.js';
import { findDeposit, listDeposits, type DepositFilters, type Scope } from './deposits-repository.js';
import { propertiesByResource, type AssignmentView } from './properties-service.js';

export type { DepositFilters };

export type DepositRow = NonNullable<Awaited<ReturnType<typeof findDeposit>>> & { properties: AssignmentView[] };

/** A page of the nonprofit's deposits with their property values (two queries), newest first. */
export async function depositsPage(
  db: Db,
  scope: Scope,
  filters: DepositFilters,
  cursor: Cursor | undefined,
  limit: number,
): Promise<DepositRow[]> {
  const rows = await listDeposits(db, scope, filters, cursor, limit);
  // The rows include the one past the page (a next page's sign): its values are not needed.
  const properties = await propertiesByResource(
    db,
    rows.slice(0, limit).map((r) => r.id),
  );
  return rows.map((row) => ({ ...row, properties: properties.get(row.id) ?? [] }));
}

export async function depositOf(db: Db, scope: Scope, id: string): Promise<DepositRow | undefined> {
  const row = await findDeposit(db, scope, id);
  if (!row) return undefined;
  const properties = await propertiesByResource(db, [row.id]);
  return { ...row, properties: properties.get(row.id) ?? [] };
}
