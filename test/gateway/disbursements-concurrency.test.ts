import { beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { importBmfFile } from '../../src/directory/import-service.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { bmfLine, writeBmfFile } from '../helpers/bmf.js';
import { apiRequest } from '../helpers/gateway.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Approvals racing for one account's balance (docs/grantmaking.md, "Disbursements"): the
 * account's lock makes them decide one at a time, so exactly as many are submitted as the
 * balance covers, the rest wait, and a later deposit submits the ones it covers.
 */

const { testDatabase: t, server } = useOAuthServer({ staff: 0, serverPoolMax: 10 });
const EIN = '74-1000001';
const AMOUNT = 1_000;
let key: string;
let accountId: string;
let recipientId: string;

beforeAll(async () => {
  await importBmfFile(t.db, writeBmfFile([bmfLine({ EIN: '840000201', NAME: 'HILLTOP LIBRARY' })]));
  recipientId = (await t.db.selectFrom('directory_organizations').select('id').where('ein', '=', '840000201').executeTakeFirstOrThrow()).id;
  await addOrganization(t.db, { ein: EIN, name: 'Summit Foundation', kind: 'grantmaker' });
  key = (await createApiKey(t.db, { org: EIN, environment: 'sandbox' })).key;
  accountId = ((await call('GET', '/v1/financial_accounts')).body.results as { id: string }[])[0]!.id;
});

function call(method: string, path: string, json?: unknown) {
  return apiRequest(server, 'sandbox', method, path, { bearer: key, json });
}

/** A grantmaker of its own for a test: the first test leaves disbursements waiting for its balance. */
async function useGrantmaker(ein: string) {
  await addOrganization(t.db, { ein, name: `Foundation ${ein}`, kind: 'grantmaker' });
  key = (await createApiKey(t.db, { org: ein, environment: 'sandbox' })).key;
  accountId = ((await call('GET', '/v1/financial_accounts')).body.results as { id: string }[])[0]!.id;
}

async function fund(amount: number) {
  const res = await call('POST', '/v1/inbound_transfers', { amount, account_id: accountId });
  expect((await call('POST', `/v1/simulations/inbound_transfers/${res.body.id as string}/complete`)).status).toBe(202);
}

async function create(): Promise<string> {
  const res = await call('POST', '/v1/disbursements', {
    organization_id: recipientId,
    amount: AMOUNT,
    transactions: [{ amount: AMOUNT, type: 'donor_advised_fund_grant' }],
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

async function counts(ids: readonly string[]) {
  const rows = await t.db.selectFrom('disbursements').select(['status']).where('id', 'in', ids).execute();
  return rows.reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }), {});
}

async function waitingOldestFirst(ids: readonly string[]) {
  const rows = await t.db
    .selectFrom('disbursements')
    .select('id')
    .where('id', 'in', ids)
    .where('status', '=', 'awaiting_balance')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((r) => r.id);
}

async function balance() {
  return (await call('GET', `/v1/financial_accounts/${accountId}/balance`)).body as { current_balance: number; available_balance: number };
}

describe('concurrent approvals', () => {
  it('64 approvals at once on a balance covering 10: 10 submitted, 54 awaiting_balance; a deposit covering 5 more submits exactly 5', async () => {
    await fund(10 * AMOUNT);
    const ids: string[] = [];
    for (let i = 0; i < 64; i++) ids.push(await create());
    const answers = await Promise.all(ids.map((id) => call('POST', `/v1/disbursements/${id}/approve`)));
    expect(answers.map((a) => a.status)).toEqual(ids.map(() => 200));
    expect(await counts(ids)).toEqual({ submitted: 10, awaiting_balance: 54 });
    expect(await balance()).toMatchObject({ available_balance: 0, current_balance: 10 * AMOUNT });
    const holds = await t.db
      .selectFrom('ledger_transfers')
      .select('id')
      .where('reference_type', '=', 'disbursement')
      .where('kind', '=', 'hold')
      .execute();
    expect(holds).toHaveLength(10);
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });

    const waitingBefore = await waitingOldestFirst(ids);
    await fund(5 * AMOUNT);
    expect(await counts(ids)).toEqual({ submitted: 15, awaiting_balance: 49 });
    // Oldest first: the five the deposit submitted are the five that had waited longest.
    expect(await waitingOldestFirst(ids)).toEqual(waitingBefore.slice(5));
    expect(await balance()).toMatchObject({ available_balance: 0, current_balance: 15 * AMOUNT });
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
  });

  it('8 approvals of one disbursement at once: one transition, one hold, the others 400', async () => {
    await useGrantmaker('74-1000002');
    await fund(AMOUNT);
    const id = await create();
    const answers = await Promise.all(Array.from({ length: 8 }, () => call('POST', `/v1/disbursements/${id}/approve`)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400, 400, 400, 400, 400, 400]);
    const holds = await t.db
      .selectFrom('ledger_transfers')
      .select('id')
      .where('reference_type', '=', 'disbursement')
      .where('reference_id', '=', id)
      .execute();
    expect(holds).toHaveLength(1);
    const events = await t.db.selectFrom('events').select('category').where('associated_object_id', '=', id).execute();
    expect(events.map((e) => e.category).sort()).toEqual(['disbursement.created', 'disbursement.updated']);
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
  });

  it('8 approvals of one auto-fund disbursement at once, one by one and in bulk: one transition, exactly one inbound transfer', async () => {
    await useGrantmaker('74-1000003');
    const res = await call('POST', '/v1/disbursements', {
      organization_id: recipientId,
      amount: AMOUNT,
      auto_fund: true,
      transactions: [{ amount: AMOUNT, type: 'donor_advised_fund_grant' }],
    });
    const id = res.body.id as string;
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        i % 2 === 0
          ? call('POST', `/v1/disbursements/${id}/approve`)
          : call('POST', '/v1/disbursements/approve', { disbursement_ids: [id] }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400, 400, 400, 400, 400, 400]);
    const transfers = await t.db.selectFrom('inbound_transfers').select(['id', 'status']).where('disbursement_id', '=', id).execute();
    expect(transfers.map((r) => r.status)).toEqual(['pending']);
    const created = await t.db.selectFrom('events').select('category').where('associated_object_id', '=', transfers[0]!.id).execute();
    expect(created.map((e) => e.category)).toEqual(['inbound_transfer.created']);
    expect((await t.db.selectFrom('disbursements').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status).toBe(
      'awaiting_balance',
    );
  });

  it("an auto-fund transfer's completion racing its disbursement's cancel: one wins whole, the money held or left available, never both", async () => {
    await useGrantmaker('74-1000004');
    let submitted = 0;
    for (let round = 0; round < 6; round++) {
      const res = await call('POST', '/v1/disbursements', {
        organization_id: recipientId,
        amount: AMOUNT,
        auto_fund: true,
        transactions: [{ amount: AMOUNT, type: 'donor_advised_fund_grant' }],
      });
      const id = res.body.id as string;
      await call('POST', `/v1/disbursements/${id}/approve`);
      const transfer = await t.db.selectFrom('inbound_transfers').select('id').where('disbursement_id', '=', id).executeTakeFirstOrThrow();
      await Promise.all([
        call('POST', `/v1/disbursements/${id}/cancel`),
        call('POST', `/v1/simulations/inbound_transfers/${transfer.id}/complete`),
      ]);
      const d = await t.db.selectFrom('disbursements').select('status').where('id', '=', id).executeTakeFirstOrThrow();
      const tr = await t.db.selectFrom('inbound_transfers').select('status').where('id', '=', transfer.id).executeTakeFirstOrThrow();
      expect([
        ['canceled', 'canceled'],
        ['submitted', 'completed'],
      ]).toContainEqual([d.status, tr.status]);
      if (d.status === 'submitted') submitted += 1;
    }
    // Every completed transfer's money is held for its disbursement; a canceled one brought none.
    expect(await balance()).toMatchObject({ available_balance: 0, current_balance: submitted * AMOUNT });
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
  });

  it('an auto-fund disbursement canceled while it is approved: never a pending transfer left behind a canceled disbursement', async () => {
    await useGrantmaker('74-1000005');
    for (let round = 0; round < 6; round++) {
      const res = await call('POST', '/v1/disbursements', {
        organization_id: recipientId,
        amount: AMOUNT,
        auto_fund: true,
        transactions: [{ amount: AMOUNT, type: 'donor_advised_fund_grant' }],
      });
      const id = res.body.id as string;
      const [, canceled] = await Promise.all([
        call('POST', `/v1/disbursements/${id}/approve`),
        call('POST', `/v1/disbursements/${id}/cancel`),
      ]);
      expect(canceled.status, JSON.stringify(canceled.body)).toBe(200);
      const d = await t.db.selectFrom('disbursements').select('status').where('id', '=', id).executeTakeFirstOrThrow();
      const transfers = await t.db.selectFrom('inbound_transfers').select('status').where('disbursement_id', '=', id).execute();
      // Canceled before the approval (no transfer), or after it (its transfer with it).
      expect([
        ['canceled', []],
        ['canceled', ['canceled']],
      ]).toContainEqual([d.status, transfers.map((r) => r.status)]);
    }
  });
});
