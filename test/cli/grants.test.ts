import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { runAdmin } from '../helpers/admin-cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/** `admin grants complete|cancel`: production's rail for DAFpay grants (docs/giving.md, "A grant's life"). */

let t: TestDatabase;
let platformId: string;
let connectId: string;

beforeAll(async () => {
  t = await createTestDatabase();
  platformId = (await addOrganization(t.db, { ein: '76-2000001', name: 'Rail Platform', kind: 'platform' })).id;
  connectId = 'live_01jtestconnect000000000000';
  await t.db
    .insertInto('connects')
    .values({ id: connectId, environment: 'production', organization_id: platformId, name: 'site', metadata: '{}' })
    .execute();
});
afterAll(async () => t?.drop());

const admin = (...argv: string[]) => runAdmin(argv, { DATABASE_URL: t.url });

async function grant(environment: 'production' | 'sandbox', amount: number, fee: number) {
  if (environment === 'sandbox')
    await t.db
      .insertInto('connects')
      .values({ id: 'test_01jtestconnect000000000000', environment, organization_id: platformId, name: 'site', metadata: '{}' })
      .onConflict((oc) => oc.doNothing())
      .execute();
  const row = await t.db
    .insertInto('grants')
    .values({
      environment,
      organization_id: platformId,
      connect_id: environment === 'production' ? connectId : 'test_01jtestconnect000000000000',
      tracking_id: 'ABCDEFGHJK',
      fund_id: 'daf',
      amount,
      application_fee: fee,
      status: 'initiated',
      payment_channel: 'dafpay_network',
      metadata: '{}',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

describe('admin grants', () => {
  it("complete moves a production grant's money once, audited with the evidence; again is refused", async () => {
    const id = await grant('production', 10_000, 300);
    const done = await admin('grants', 'complete', '--id', id, '--reference', 'ACH-TRACE-1', '--json');
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toEqual({ id, status: 'completed', amount: 10_000, reference: 'ACH-TRACE-1' });
    const entries = await t.db
      .selectFrom('ledger_entries as e')
      .innerJoin('ledger_transfers as x', 'x.id', 'e.transfer_id')
      .select(['e.amount', 'x.kind'])
      .where('x.reference_id', '=', id)
      .orderBy('e.amount')
      .execute();
    expect(entries).toEqual([
      { amount: '-10000', kind: 'grant_payment' },
      { amount: '300', kind: 'grant_payment' },
      { amount: '9700', kind: 'grant_payment' },
    ]);
    const audit = await t.db.selectFrom('audit_events').select(['event', 'details']).where('event', '=', 'grant.completed').execute();
    expect(audit).toEqual([
      { event: 'grant.completed', details: { grant_id: id, amount: 10_000, reference: 'ACH-TRACE-1', via: 'admin_cli' } },
    ]);
    const again = await admin('grants', 'complete', '--id', id, '--reference', 'ACH-TRACE-1');
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/already completed/);
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
    // Its processing account moved money now: the platform's ledger records are kept.
    const remove = await admin('orgs', 'remove', '--ein', '76-2000001', '--force');
    expect(remove.code).not.toBe(0);
    expect(remove.stderr).toMatch(/financial accounts, whose ledger records are kept/);
  });

  it('lets an organization whose processing accounts never moved money be removed, with them', async () => {
    const org = await addOrganization(t.db, { ein: '76-1000009', name: 'Brief Nonprofit', kind: 'nonprofit' });
    expect(await t.db.selectFrom('financial_accounts').select('id').where('organization_id', '=', org.id).execute()).toHaveLength(2);
    const removed = await admin('orgs', 'remove', '--ein', '76-1000009');
    expect(removed.code, removed.stderr).toBe(0);
    expect(await t.db.selectFrom('ledger_accounts').select('id').where('organization_id', '=', org.id).execute()).toEqual([]);
  });

  it('cancel moves no money; a sandbox grant and a missing reference are refused', async () => {
    const id = await grant('production', 5000, 0);
    const canceled = await admin('grants', 'cancel', '--id', id, '--reference', 'DAF letter 7');
    expect(canceled.code, canceled.stderr).toBe(0);
    expect(canceled.stdout).toMatch(/canceled/);
    expect(await t.db.selectFrom('ledger_transfers').select('id').where('reference_id', '=', id).execute()).toEqual([]);
    const sandbox = await grant('sandbox', 5000, 0);
    const refused = await admin('grants', 'complete', '--id', sandbox, '--reference', 'X');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/no production grant/);
    expect((await admin('grants', 'complete', '--id', id)).code).not.toBe(0);
  });
});
