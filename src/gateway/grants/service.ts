import type { Db } from '../../db/database.js';
import type { Cursor } from '../../db/keyset.js';
import type { Environment } from '../../db/schema.js';
import { connectBelongsTo, findGrant, listGrants, type GrantRow } from './repository.js';

export type { GrantRow };

/** The caller: an organization in one environment. */
type Scope = { organizationId: string; environment: Environment };

/** Whether a connect is the caller's (another organization's or environment's is unknown to it). */
export async function isCallersConnect(db: Db, scope: Scope, connectId: string): Promise<boolean> {
  return (await connectBelongsTo(db, scope, connectId)) !== undefined;
}

/** A page of the caller's grants, across its connects or of one, newest first. */
export function grantsPage(
  db: Db,
  scope: Scope,
  connectId: string | undefined,
  cursor: Cursor | undefined,
  limit: number,
): Promise<GrantRow[]> {
  return listGrants(db, scope, connectId, cursor, limit);
}

/** One of the caller's grants, or undefined. */
export function grantOf(db: Db, scope: Scope, id: string): Promise<GrantRow | undefined> {
  return findGrant(db, scope, id);
}
