import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import type { Db } from '../../src/db/database.js';
import type { Environment } from '../../src/db/schema.js';
import type { SessionDonorJson, WorkflowFrequency } from '../../src/db/schema-giving.js';
import { importBmfFile } from '../../src/directory/import-service.js';
import { insertWorkflowSession } from '../../src/giving/workflow-sessions-repository.js';
import { bmfLine, writeBmfFile } from './bmf.js';
import crypto from 'node:crypto';
import { directoryOrganization } from './grantmaking.js';

/** DAFpay giving's fixtures (docs/giving.md): directory nonprofits, callers, DAFs, Connects made as rows (as POST /v1/connects would) and authorized workflow sessions. */

/** A donor's authorization in the flow, as the donor side records it. */
export function authorizedSession(
  db: Db,
  input: {
    connectId: string;
    dafId: string;
    environment?: Environment;
    frequency?: WorkflowFrequency;
    amount?: number;
    donor?: SessionDonorJson;
    donorAccountId?: string | null;
    donorBalance?: number | null;
    note?: string;
    designation?: string;
    now?: Date;
  },
) {
  return insertWorkflowSession(db, {
    environment: input.environment ?? 'sandbox',
    connect_id: input.connectId,
    daf_id: input.dafId,
    frequency: input.frequency ?? 'one_time',
    amount: input.amount ?? 50_000,
    donor: JSON.stringify(input.donor ?? { firstName: 'Ada', lastName: 'Donor', email: 'ada@example.org' }),
    note: input.note ?? null,
    designation: input.designation ?? null,
    donor_account_id: input.donorAccountId ?? null,
    donor_balance: input.donorBalance ?? null,
    now: input.now,
  });
}

/** Directory organizations by EIN (9 digits), imported from a BMF file; returns their published ids. */
export async function directoryOrganizations(db: Db, entries: readonly { ein: string; name: string }[]): Promise<Map<string, string>> {
  await importBmfFile(db, writeBmfFile(entries.map((e) => bmfLine({ EIN: e.ein, NAME: e.name }))));
  const rows = await db
    .selectFrom('directory_organizations')
    .select(['id', 'ein'])
    .where(
      'ein',
      'in',
      entries.map((e) => e.ein),
    )
    .execute();
  return new Map(rows.map((r) => [r.ein, r.id]));
}

/** An organization of a kind with an API key in each environment. */
export async function givingCaller(db: Db, ein: string, name: string, kind: string) {
  const org = await addOrganization(db, { ein, name, kind });
  return {
    id: org.id,
    sandbox: (await createApiKey(db, { org: ein, environment: 'sandbox' })).key,
    production: (await createApiKey(db, { org: ein, environment: 'production' })).key,
  };
}

/** The sandbox's simulated DAF. */
export async function simulatedDafId(db: Db): Promise<string> {
  return (await db.selectFrom('dafs').select('id').where('simulated', '=', true).executeTakeFirstOrThrow()).id;
}

/** The integrated DAF of a fund provider (kept by a trigger). */
export async function dafOfFundProvider(db: Db, fundProviderId: string): Promise<string> {
  return (await db.selectFrom('dafs').select('id').where('fund_provider_id', '=', fundProviderId).executeTakeFirstOrThrow()).id;
}

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
