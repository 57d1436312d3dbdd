import type { Selectable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { ConnectsTable } from '../db/schema.js';

export type ConnectRow = Selectable<ConnectsTable>;

/**
 * A Connect by its id alone, with the name of the nonprofit it is for: what the donor flow opens
 * (the id is the publishable cid; its environment is the one the id says).
 */
export function findConnectForFlow(db: Executor, id: string) {
  return db
    .selectFrom('connects as c')
    .leftJoin('directory_organizations as d', 'd.id', 'c.recipient_organization_id')
    .innerJoin('organizations as o', 'o.id', 'c.organization_id')
    .select([
      'c.id',
      'c.environment',
      'c.organization_id',
      'c.recipient_organization_id',
      'c.active',
      'c.name',
      'd.name as recipient_name',
      'd.ein as recipient_ein',
      'o.name as owner_name',
    ])
    .where('c.id', '=', id)
    .executeTakeFirst();
}
