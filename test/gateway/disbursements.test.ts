import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { importBmfFile } from '../../src/directory/import-service.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { bmfLine, writeBmfFile } from '../helpers/bmf.js';
import { apiRequest, type ApiResponse } from '../helpers/gateway.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Disbursements over HTTP (docs/grantmaking.md, "Disbursements"): created pending approval;
 * approved they hold their amount (submitted) or wait for the balance; completed the hold leaves
 * the account, failed it is released once; canceled before submission, nothing moves.
 */

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const EIN = '73-1000001';
let sandboxKey: string;
let productionKey: string;
let otherKey: string;
let nonprofitKey: string;
let accountId: string;
let recipientId: string;
/** A recipient onboarded onto the sandbox's ACH rail: its payments can fail (a check's is returned instead). */
let achRecipientId: string;

beforeAll(async () => {
  await importBmfFile(
    t.db,
    writeBmfFile([bmfLine({ EIN: '840000101', NAME: 'RIVERSIDE FOOD BANK' }), bmfLine({ EIN: '840000102', NAME: 'LAKESIDE PANTRY' })]),
  );
  recipientId = (await t.db.selectFrom('directory_organizations').select('id').where('ein', '=', '840000101').executeTakeFirstOrThrow()).id;
  achRecipientId = (await t.db.selectFrom('directory_organizations').select('id').where('ein', '=', '840000102').executeTakeFirstOrThrow())
    .id;
  await addOrganization(t.db, { ein: EIN, name: 'Harbor Foundation', kind: 'grantmaker' });
  await addOrganization(t.db, { ein: '73-1000002', name: 'Other Foundation', kind: 'grantmaker' });
  await addOrganization(t.db, { ein: '73-1000003', name: 'Harbor Shelter', kind: 'nonprofit' });
  sandboxKey = (await createApiKey(t.db, { org: EIN, environment: 'sandbox' })).key;
  productionKey = (await createApiKey(t.db, { org: EIN, environment: 'production' })).key;
  otherKey = (await createApiKey(t.db, { org: '73-1000002', environment: 'sandbox' })).key;
  nonprofitKey = (await createApiKey(t.db, { org: '73-1000003', environment: 'sandbox' })).key;
  accountId = ((await call('GET', '/v1/financial_accounts')).body.results as { id: string }[])[0]!.id;
  const onboarded = await call('POST', `/v1/simulations/organizations/onboard/${achRecipientId}`, { settlement: 'SANDBOX_SETTLEMENT_ACH' });
  expect(onboarded.status, JSON.stringify(onboarded.body)).toBe(200);
  await fund(100_000);
});

function call(
  method: string,
  path: string,
  json?: unknown,
  bearer = sandboxKey,
  environment: 'sandbox' | 'production' = 'sandbox',
  headers?: Record<string, string>,
) {
  return apiRequest(server, environment, method, path, { bearer, json, headers });
}

/** An inbound transfer, completed by the simulation: the account's available balance grows. */
async function fund(amount: number) {
  const res = await call('POST', '/v1/inbound_transfers', { amount, account_id: accountId });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect((await call('POST', `/v1/simulations/inbound_transfers/${res.body.id as string}/complete`)).status).toBe(202);
}

function body(amount: number, extra: Record<string, unknown> = {}) {
  return { organization_id: recipientId, amount, transactions: [{ amount, type: 'donor_advised_fund_grant' }], ...extra };
}

async function create(amount: number, recipient = recipientId): Promise<string> {
  const res = await call('POST', '/v1/disbursements', body(amount, { organization_id: recipient }));
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

async function approved(amount: number, recipient = recipientId): Promise<string> {
  const id = await create(amount, recipient);
  const res = await call('POST', `/v1/disbursements/${id}/approve`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.status).toBe('submitted');
  return id;
}

async function balance() {
  return (await call('GET', `/v1/financial_accounts/${accountId}/balance`)).body as { current_balance: number; available_balance: number };
}

async function status(id: string) {
  return (await call('GET', `/v1/disbursements/${id}`)).body.status;
}

function transfersOf(id: string) {
  return t.db
    .selectFrom('ledger_transfers')
    .select('kind')
    .where('reference_type', '=', 'disbursement')
    .where('reference_id', '=', id)
    .orderBy('kind')
    .execute()
    .then((rows) => rows.map((r) => r.kind));
}

function expectProblem(res: ApiResponse, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ status, code });
}

async function expectLedgerOk() {
  expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
}

describe('disbursements', () => {
  it('are created pending_approval (201, Location) with their transactions, program and a disbursement.created event; got and listed', async () => {
    const res = await call('POST', '/v1/disbursements', {
      organization_id: recipientId,
      amount: 24_000,
      transactions: [
        {
          amount: 15_000,
          fee_amount: 500,
          type: 'donor_advised_fund_grant',
          internal_transaction_id: 'GRANT-001',
          daf_grant: { fund_name: 'Doe Fund' },
        },
        { amount: 10_000, fee_amount: 500, type: 'corporate_match', corporate_match: { company_name: 'Acme' }, metadata: { a: 'b' } },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ organization_id: recipientId, amount: 24_000, status: 'pending_approval', auto_fund: false });
    expect(res.body.id).toMatch(/^disbursement_[0-9a-z]{26}$/);
    expect(res.headers.get('location')).toBe(`/v1/disbursements/${res.body.id as string}`);
    expect((res.body.program_details as { name: string }).name).toBe('Grantmaking');
    expect(res.body.transactions).toMatchObject([
      { amount: 15_000, fee_amount: 500, net_amount: 14_500, internal_transaction_id: 'GRANT-001', daf_grant: { fund_name: 'Doe Fund' } },
      { amount: 10_000, fee_amount: 500, net_amount: 9_500, type: 'corporate_match', metadata: { a: 'b' } },
    ]);
    expect((await call('GET', `/v1/disbursements/${res.body.id as string}`)).body).toEqual(res.body);
    const list = await call('GET', `/v1/disbursements?organization_id=${recipientId}`);
    expect((list.body.results as { id: string }[]).map((r) => r.id)).toContain(res.body.id);
    expect(((await call('GET', '/v1/disbursements?organization_id=org_00000000000000000000000000000000')).body.results as []).length).toBe(
      0,
    );
    const events = await t.db
      .selectFrom('events')
      .select('category')
      .where('associated_object_id', '=', res.body.id as string)
      .execute();
    expect(events.map((e) => e.category)).toEqual(['disbursement.created']);
  });

  it('approved with the balance covering it: submitted, available down by the amount, current the same, the ledger balanced', async () => {
    const before = await balance();
    const id = await approved(1_000);
    expect(await balance()).toEqual({ ...before, available_balance: before.available_balance - 1_000, timestamp: expect.any(String) });
    expect(await transfersOf(id)).toEqual(['hold']);
    const events = await t.db
      .selectFrom('events')
      .select('category')
      .where('associated_object_id', '=', id)
      .orderBy('created_at')
      .execute();
    expect(events.map((e) => e.category)).toEqual(['disbursement.created', 'disbursement.updated']);
    expect(((await call('GET', `/v1/disbursements/${id}`)).body.approval as { approved_at: string }).approved_at).toEqual(
      expect.any(String),
    );
    await expectLedgerOk();
  });

  it('completed (sandbox): completed, the current balance down by the amount; a second completion or a failure is 412 and moves nothing', async () => {
    const id = await approved(2_000);
    const before = await balance();
    expect((await call('POST', `/v1/simulations/disbursements/${id}/complete`)).status).toBe(202);
    expect(await status(id)).toBe('completed');
    const after = await balance();
    expect(after.current_balance).toBe(before.current_balance - 2_000);
    expect(after.available_balance).toBe(before.available_balance);
    expectProblem(await call('POST', `/v1/simulations/disbursements/${id}/complete`), 412, 'precondition');
    expectProblem(await call('POST', `/v1/simulations/disbursements/${id}/fail`), 412, 'precondition');
    expect(await transfersOf(id)).toEqual(['hold', 'hold_settle']);
    expect((await balance()).current_balance).toBe(after.current_balance);
    await expectLedgerOk();
  });

  it('failed (sandbox, an ACH credit): failed, the hold released once, the available balance back; a second failure is 412', async () => {
    const before = await balance();
    const id = await approved(3_000, achRecipientId);
    expect((await call('POST', `/v1/simulations/disbursements/${id}/fail`)).status).toBe(202);
    expect(await status(id)).toBe('failed');
    expect(await balance()).toMatchObject({ current_balance: before.current_balance, available_balance: before.available_balance });
    expectProblem(await call('POST', `/v1/simulations/disbursements/${id}/fail`), 412, 'precondition');
    expect(await transfersOf(id)).toEqual(['hold', 'hold_release']);
    await expectLedgerOk();
  });

  it('approved beyond the available balance: awaiting_balance, no hold; canceled then, nothing moves; a second cancel is 400', async () => {
    const before = await balance();
    const id = await create(before.available_balance + 1);
    const res = await call('POST', `/v1/disbursements/${id}/approve`);
    expect(res.body.status).toBe('awaiting_balance');
    expect(await transfersOf(id)).toEqual([]);
    const canceled = await call('POST', `/v1/disbursements/${id}/cancel`);
    expect(canceled.status).toBe(200);
    expect(canceled.body.status).toBe('canceled');
    expect((canceled.body.cancelation as { canceled_at: string }).canceled_at).toEqual(expect.any(String));
    expectProblem(await call('POST', `/v1/disbursements/${id}/cancel`), 400, 'invalid');
    expect(await transfersOf(id)).toEqual([]);
    expect(await balance()).toMatchObject({ current_balance: before.current_balance, available_balance: before.available_balance });
  });

  it('canceled pending approval: canceled, no money moves; then neither approved (400) nor completed (412)', async () => {
    const id = await create(500);
    expect((await call('POST', `/v1/disbursements/${id}/cancel`)).body.status).toBe('canceled');
    expectProblem(await call('POST', `/v1/disbursements/${id}/approve`), 400, 'invalid');
    expectProblem(await call('POST', `/v1/simulations/disbursements/${id}/complete`), 412, 'precondition');
    expect(await transfersOf(id)).toEqual([]);
  });

  it('a submitted disbursement is not canceled (400): its hold stays, once', async () => {
    const id = await approved(700);
    expectProblem(await call('POST', `/v1/disbursements/${id}/cancel`), 400, 'invalid');
    expectProblem(await call('POST', `/v1/disbursements/${id}/approve`), 400, 'invalid');
    expect(await status(id)).toBe('submitted');
    expect(await transfersOf(id)).toEqual(['hold']);
  });

  it('an awaiting disbursement is submitted when an inbound transfer that covers it completes', async () => {
    const { available_balance } = await balance();
    const id = await create(available_balance + 5_000);
    expect((await call('POST', `/v1/disbursements/${id}/approve`)).body.status).toBe('awaiting_balance');
    await fund(5_000);
    expect(await status(id)).toBe('submitted');
    expect((await balance()).available_balance).toBe(0);
    await expectLedgerOk();
    await fund(100_000);
  });

  it('bad input is 400 naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ ...body(100), amount: 0 }, 'amount'],
      [{ ...body(100), amount: 1.5 }, 'amount'],
      [{ ...body(100), amount: '100' }, 'amount'],
      [{ organization_id: recipientId, transactions: [{ amount: 100, type: 'corporate_match' }] }, 'amount'],
      [{ ...body(100), transactions: [] }, 'transactions'],
      [{ ...body(100), transactions: [{ amount: 100, type: 'gift' }] }, 'type'],
      [{ ...body(100), transactions: [{ amount: 100, fee_amount: 100, type: 'corporate_match' }] }, 'fee_amount'],
      [{ ...body(100), organization_id: 'org_00000000000000000000000000000000' }, 'organization_id'],
      [{ ...body(100), program_id: 'program_00000000000000000000000000' }, 'program_id'],
      [{ ...body(100), auto_fund: 'yes' }, 'auto_fund'],
      [{ ...body(100), bypass_chariot_organization_verification: 1 }, 'bypass_chariot_organization_verification'],
      [{ ...body(100), unknown: 1 }, 'unknown'],
    ];
    for (const [json, field] of cases) {
      const res = await call('POST', '/v1/disbursements', json);
      expectProblem(res, 400, 'invalid');
      expect(JSON.stringify(res.body), JSON.stringify(json)).toContain(field);
    }
    expect(
      await t.db
        .selectFrom('disbursements')
        .select('id')
        .where('amount', '=', 100 as never)
        .execute(),
    ).toEqual([]);
  });

  it('transactions whose net amounts do not sum to the amount are 400 naming transactions', async () => {
    const res = await call('POST', '/v1/disbursements', {
      organization_id: recipientId,
      amount: 1_000,
      transactions: [
        { amount: 600, type: 'donor_advised_fund_grant' },
        { amount: 500, fee_amount: 50, type: 'donor_advised_fund_grant' },
      ],
    });
    expectProblem(res, 400, 'invalid');
    expect(res.body.detail).toContain('transactions');
  });

  it("another grantmaker's disbursement is 404 to every operation; a nonprofit is 403", async () => {
    const id = await create(100);
    for (const [method, path] of [
      ['GET', `/v1/disbursements/${id}`],
      ['POST', `/v1/disbursements/${id}/approve`],
      ['POST', `/v1/disbursements/${id}/cancel`],
      ['POST', `/v1/simulations/disbursements/${id}/complete`],
    ] as const) {
      expectProblem(await call(method, path, undefined, otherKey), 404, 'not_found');
    }
    expect(((await call('GET', '/v1/disbursements', undefined, otherKey)).body.results as []).length).toBe(0);
    expectProblem(await call('GET', '/v1/disbursements', undefined, nonprofitKey), 403, 'forbidden');
    expectProblem(await call('POST', '/v1/disbursements', body(100), nonprofitKey), 403, 'forbidden');
    expect(await status(id)).toBe('pending_approval');
  });

  it('the simulations are 404 in production; a sandbox id is 404 in production', async () => {
    const id = await create(100);
    expectProblem(
      await call('POST', `/v1/simulations/disbursements/${id}/complete`, undefined, productionKey, 'production'),
      404,
      'not_found',
    );
    expectProblem(await call('POST', `/v1/simulations/disbursements/${id}/fail`, undefined, productionKey, 'production'), 404, 'not_found');
    expectProblem(await call('GET', `/v1/disbursements/${id}`, undefined, productionKey, 'production'), 404, 'not_found');
  });

  it('a replayed Idempotency-Key creates one disbursement and answers the first; it is found by idempotency_key', async () => {
    const headers = { 'Idempotency-Key': 'disb-replay-1' };
    const first = await call('POST', '/v1/disbursements', body(321), sandboxKey, 'sandbox', headers);
    const second = await call('POST', '/v1/disbursements', body(321), sandboxKey, 'sandbox', headers);
    expect(first.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(first.body.idempotency_key).toBe('disb-replay-1');
    const rows = await t.db.selectFrom('disbursements').select('id').where('idempotency_key', '=', 'disb-replay-1').execute();
    expect(rows.map((r) => r.id)).toEqual([first.body.id]);
    const found = await call('GET', '/v1/disbursements?idempotency_key=disb-replay-1');
    expect((found.body.results as { id: string }[]).map((r) => r.id)).toEqual([first.body.id]);
    expectProblem(await call('POST', '/v1/disbursements', body(322), sandboxKey, 'sandbox', headers), 409, 'conflict');
  });

  it('a key sent again past its 24 hours runs afresh, and still makes no second disbursement: 409', async () => {
    const headers = { 'Idempotency-Key': 'disb-stale-1' };
    const first = await call('POST', '/v1/disbursements', body(323), sandboxKey, 'sandbox', headers);
    expect(first.status).toBe(201);
    await sql`update idempotency_keys set created_at = now() - interval '25 hours' where key = 'disb-stale-1'`.execute(t.db);
    const again = await call('POST', '/v1/disbursements', body(323), sandboxKey, 'sandbox', headers);
    expectProblem(again, 409, 'conflict');
    expect(again.body.detail).toMatch(/already created with this Idempotency-Key/);
    const rows = await t.db.selectFrom('disbursements').select('id').where('idempotency_key', '=', 'disb-stale-1').execute();
    expect(rows.map((r) => r.id)).toEqual([first.body.id]);
  });

  it('lists page newest first with next_page_token', async () => {
    const ids = [await create(11), await create(12), await create(13)];
    const first = await call('GET', '/v1/disbursements?page_limit=2');
    expect((first.body.results as { id: string }[]).map((r) => r.id)).toEqual([ids[2], ids[1]]);
    const next = await call('GET', `/v1/disbursements?page_limit=2&next_page_token=${first.body.next_page_token as string}`);
    expect((next.body.results as { id: string }[])[0]!.id).toBe(ids[0]);
    expectProblem(await call('GET', '/v1/disbursements?page_limit=0'), 400, 'invalid');
  });

  it('bulk create makes all or none: one refused item is a 400 naming it, and nothing is created', async () => {
    const before = await t.db.selectFrom('disbursements').select('id').execute();
    const refused = await call('POST', '/v1/disbursements/bulk', { disbursements: [body(40), { ...body(41), amount: 42 }] });
    expectProblem(refused, 400, 'invalid');
    expect(refused.body.detail).toContain('disbursements[1]');
    expect(await t.db.selectFrom('disbursements').select('id').execute()).toHaveLength(before.length);
    const res = await call('POST', '/v1/disbursements/bulk', { disbursements: [body(40), body(41)] });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.count).toBe(2);
    expect((res.body.disbursements as { amount: number; status: string }[]).map((d) => [d.amount, d.status])).toEqual([
      [40, 'pending_approval'],
      [41, 'pending_approval'],
    ]);
  });

  it('bulk approval approves all or none: one not pending approval (400) or not found (404) leaves every one pending and holds nothing', async () => {
    const [a, b, c] = [await create(50), await create(60), await create(70)];
    await call('POST', `/v1/disbursements/${c}/cancel`);
    expectProblem(await call('POST', '/v1/disbursements/approve', { disbursement_ids: [a, b, c] }), 400, 'invalid');
    expectProblem(await call('POST', '/v1/disbursements/approve', { disbursement_ids: [a, 'disbursement_0'] }), 404, 'not_found');
    expectProblem(await call('POST', '/v1/disbursements/approve', { disbursement_ids: [a, a] }), 400, 'invalid');
    expect([await status(a), await status(b)]).toEqual(['pending_approval', 'pending_approval']);
    expect([...(await transfersOf(a)), ...(await transfersOf(b))]).toEqual([]);
    const before = await balance();
    const res = await call('POST', '/v1/disbursements/approve', { disbursement_ids: [b, a] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.count).toBe(2);
    expect((res.body.disbursements as { id: string; status: string }[]).map((d) => [d.id, d.status])).toEqual([
      [b, 'submitted'],
      [a, 'submitted'],
    ]);
    expect((await balance()).available_balance).toBe(before.available_balance - 110);
    await expectLedgerOk();
  });
});
