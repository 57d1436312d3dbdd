import type { Insertable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { UnintegratedGrantsTable } from '../db/schema-giving.js';

/** An unintegrated DAF's grant, written by the donor flow with its workflow session (docs/giving.md, "The donor flow"). */
export function insertUnintegratedGrant(db: Executor, values: Insertable<UnintegratedGrantsTable>) {
  return db.insertInto('unintegrated_grants').values(values).returningAll().executeTakeFirstOrThrow();
}
