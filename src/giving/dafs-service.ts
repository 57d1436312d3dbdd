import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import { findDaf, isSupported, listDafs, type DafCursor, type DafFilters, type DafRow } from './dafs-repository.js';

/** The DAF directory as the API reads it (docs/giving.md, "DAFs"). */

export { isSupported, type DafCursor, type DafRow };

/** A page of the environment's DAFs in name order, one row more than `limit` when another page follows. */
export function dafsPage(
  db: Db,
  environment: Environment,
  filters: DafFilters,
  cursor: DafCursor | undefined,
  limit: number,
): Promise<DafRow[]> {
  return listDafs(db, environment, filters, cursor, limit);
}

/** One DAF of the environment, or undefined. */
export function dafOf(db: Db, environment: Environment, id: string): Promise<DafRow | undefined> {
  return findDaf(db, environment, id);
}
