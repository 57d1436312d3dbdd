import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { ConnectsTable, Environment } from '../db/schema.js';

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

type Scope = { organizationId: string; environment: Environment };

/** One of the owner's connects in its environment, or undefined (another's is unknown). */
export function findOwnedConnect(db: Executor, scope: Scope, id: string): Promise<ConnectRow | undefined> {
  return db
    .selectFrom('connects')
    .selectAll()
    .where('id', '=', id)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .executeTakeFirst();
}

/**
 * Inserts the owner's connect for a recipient unless one exists (the unique index decides, so a
 * burst of creates makes one row); undefined when it existed.
 */
export function insertConnectOnce(db: Executor, values: Insertable<ConnectsTable>): Promise<ConnectRow | undefined> {
  return db
    .insertInto('connects')
    .values(values)
    .onConflict((oc) =>
      oc
        .columns(['organization_id', 'environment', 'recipient_organization_id'])
        .where('recipient_organization_id', 'is not', null)
        .doNothing(),
    )
    .returningAll()
    .executeTakeFirst();
}

/** The owner's connect for a recipient nonprofit. */
export function findConnectOfRecipient(db: Executor, scope: Scope, recipientId: string): Promise<ConnectRow | undefined> {
  return db
    .selectFrom('connects')
    .selectAll()
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where('recipient_organization_id', '=', recipientId)
    .executeTakeFirst();
}

/** An organization's EIN (a nonprofit creates connects for its own directory entry only). */
export async function findOrganizationEin(db: Executor, organizationId: string): Promise<string | undefined> {
  const row = await db.selectFrom('organizations').select('ein').where('id', '=', organizationId).executeTakeFirst();
  return row?.ein;
}
