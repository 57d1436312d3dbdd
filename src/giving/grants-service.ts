import type { Db } from '../db/database.js';
import type { Cursor } from '../db/keyset.js';
import type { Environment } from '../db/schema.js';
import { statusesOfGrants, type GivingGrantRow, type GrantStatusRow } from './grants-repository.js';
import {
  findRecurringGrant,
  findUnintegratedGrant,
  listRecurringGrants,
  listUnintegratedGrants,
  type RecurringGrantListRow,
  type UnintegratedGrantRow,
} from './recurring-unintegrated-repository.js';

/** What the API shows of captured grants beyond their rows (docs/giving.md, "A grant's life"). */

export type { GivingGrantRow, GrantStatusRow, RecurringGrantListRow, UnintegratedGrantRow };

/** The status histories of some grants, oldest first, by grant id. */
export async function statusHistories(db: Db, grantIds: readonly string[]): Promise<Map<string, GrantStatusRow[]>> {
  const rows = await statusesOfGrants(db, grantIds);
  const byGrant = new Map<string, GrantStatusRow[]>(grantIds.map((id) => [id, []]));
  for (const row of rows) byGrant.get(row.grant_id)?.push(row);
  return byGrant;
}

type Scope = { organizationId: string; environment: Environment };

/** A page of the owner's recurring grants (of one connect, if given), newest first. */
export function recurringGrantsPage(db: Db, scope: Scope, connectId: string | undefined, cursor: Cursor | undefined, limit: number) {
  return listRecurringGrants(db, scope, connectId, cursor, limit);
}

export function recurringGrantOf(db: Db, scope: Scope, id: string) {
  return findRecurringGrant(db, scope, id);
}

/** A page of the owner's unintegrated grants (of one connect, if given), newest first. */
export function unintegratedGrantsPage(db: Db, scope: Scope, connectId: string | undefined, cursor: Cursor | undefined, limit: number) {
  return listUnintegratedGrants(db, scope, connectId, cursor, limit);
}

export function unintegratedGrantOf(db: Db, scope: Scope, id: string) {
  return findUnintegratedGrant(db, scope, id);
}
