import crypto from 'node:crypto';
import type { Db } from '../../src/db/database.js';
import type { Environment } from '../../src/db/schema.js';
import { directoryOrganization } from './grantmaking.js';

/** DAFpay giving's fixtures (docs/giving.md): Connects made as rows, as POST /v1/connects would. */

export interface TestConnect {
  cid: string;
  recipientName: string;
  /** Nine digits. */
  ein: string;
}

let einCounter = 0;

/** A Connect of `ownerOrganizationId` for a new directory nonprofit. */
export async function createConnect(
  db: Db,
  options: { ownerOrganizationId: string; environment: Environment; active?: boolean; recipientName?: string },
): Promise<TestConnect> {
  einCounter += 1;
  const ein = `8${String(process.pid % 10000).padStart(4, '0')}${String(einCounter).padStart(4, '0')}`.slice(0, 9);
  const recipientName = options.recipientName ?? `Riverside Food Bank ${crypto.randomBytes(2).toString('hex').toUpperCase()}`;
  const recipientId = await directoryOrganization(db, ein, recipientName);
  const recipient = await db.selectFrom('directory_organizations').select('name').where('id', '=', recipientId).executeTakeFirstOrThrow();
  const cid = `connect_${crypto.randomBytes(10).toString('hex')}`;
  await db
    .insertInto('connects')
    .values({
      id: cid,
      environment: options.environment,
      organization_id: options.ownerOrganizationId,
      name: `Giving for ${recipientName}`,
      recipient_organization_id: recipientId,
      active: options.active ?? true,
    })
    .execute();
  return { cid, recipientName: recipient.name, ein };
}
