import type { Db } from '../../src/db/database.js';
import type { Environment } from '../../src/db/schema.js';
import { importBmfFile } from '../../src/directory/import-service.js';
import { financialAccountsOf } from '../../src/grantmaking/accounts-service.js';
import { createDisbursement } from '../../src/grantmaking/disbursements-service.js';
import { completeInboundTransfer, createInboundTransfer } from '../../src/grantmaking/inbound-transfers-service.js';
import { bmfLine, writeBmfFile } from './bmf.js';

/** A grantmaker's money through the services (docs/grantmaking.md), for the pages that show it. */

/** The directory organization of `ein` (nine digits), imported when missing: its `org_` id. */
export async function directoryOrganization(db: Db, ein: string, name: string): Promise<string> {
  const found = await db.selectFrom('directory_organizations').select('id').where('ein', '=', ein).executeTakeFirst();
  if (found) return found.id;
  await importBmfFile(db, writeBmfFile([bmfLine({ EIN: ein, NAME: name })]));
  return (await db.selectFrom('directory_organizations').select('id').where('ein', '=', ein).executeTakeFirstOrThrow()).id;
}

/** Deposits `amount` cents into the grantmaker's disbursements account, settled (by the operator in production). */
export async function fundGrantmaker(db: Db, organizationId: string, environment: Environment, amount: number): Promise<void> {
  const scope = { organizationId, environment };
  const account = (await financialAccountsOf(db, scope)).find((a) => a.account_type === 'disbursements')!;
  const transfer = await createInboundTransfer(db, scope, { amount, accountId: account.id });
  await completeInboundTransfer(
    db,
    environment === 'sandbox' ? { scope } : { operator: { environment, reference: `FED-${transfer.id.slice(-8)}` } },
    transfer.id,
  );
}

/** A pending_approval disbursement of `amount` cents to the recipient, created by `createdBy` (`api_key:<id>`, `user:<id>`). */
export async function pendingDisbursement(
  db: Db,
  q: { organizationId: string; environment: Environment; recipientId: string; amount: number; createdBy: string },
): Promise<string> {
  const record = await createDisbursement(db, { organizationId: q.organizationId, environment: q.environment }, q.createdBy, {
    organizationId: q.recipientId,
    amount: q.amount,
    transactions: [{ amount: q.amount, type: 'donor_advised_fund_grant' }],
  });
  return record.row.id;
}
