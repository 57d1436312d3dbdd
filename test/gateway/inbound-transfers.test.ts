import { beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { completeInboundTransfer } from '../../src/grantmaking/inbound-transfers-service.js';
import { externalLedgerAccount } from '../../src/grantmaking/platform-accounts.js';
import { postTransfer } from '../../src/ledger/ledger.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { apiRequest, type ApiResponse } from '../helpers/gateway.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Inbound transfers (docs/grantmaking.md, "Inbound transfers"): created pending; completed
 * (a sandbox simulation) they post one ledger transfer into the financial account's available
 * balance, once whatever the races; failed or canceled they move nothing.
 */

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const EIN = '72-1000001';
let sandboxKey: string;
let productionKey: string;
let otherKey: string;
let nonprofitKey: string;
let accountId: string;
let productionAccountId: string;

beforeAll(async () => {
  await addOrganization(t.db, { ein: EIN, name: 'Lakeside Foundation', kind: 'grantmaker' });
  await addOrganization(t.db, { ein: '72-1000002', name: 'Other Foundation', kind: 'grantmaker' });
  await addOrganization(t.db, { ein: '72-1000003', name: 'Lakeside Shelter', kind: 'nonprofit' });
  sandboxKey = (await createApiKey(t.db, { org: EIN, environment: 'sandbox' })).key;
  productionKey = (await createApiKey(t.db, { org: EIN, environment: 'production' })).key;
  otherKey = (await createApiKey(t.db, { org: '72-1000002', environment: 'sandbox' })).key;
  nonprofitKey = (await createApiKey(t.db, { org: '72-1000003', environment: 'sandbox' })).key;
  accountId = ((await call('GET', '/v1/financial_accounts')).body.results as { id: string }[])[0]!.id;
  productionAccountId = (
    (await call('GET', '/v1/financial_accounts', undefined, productionKey, 'production')).body.results as { id: string }[]
  )[0]!.id;
});

function call(method: string, path: string, json?: unknown, bearer = sandboxKey, environment: 'sandbox' | 'production' = 'sandbox') {
  return apiRequest(server, environment, method, path, { bearer, json });
}

async function create(amount = 2500, description?: string): Promise<string> {
  const res = await call('POST', '/v1/inbound_transfers', { amount, account_id: accountId, ...(description ? { description } : {}) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

async function balance() {
  return (await call('GET', `/v1/financial_accounts/${accountId}/balance`)).body as { current_balance: number; available_balance: number };
}

function depositsOf(id: string) {
  return t.db
    .selectFrom('ledger_transfers')
    .selectAll()
    .where('reference_type', '=', 'inbound_transfer')
    .where('reference_id', '=', id)
    .execute();
}

function expectProblem(res: ApiResponse, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ status, code });
}

describe('inbound transfers', () => {
  it('are created pending (201, Location) with an inbound_transfer.created event, and listed and got', async () => {
    const res = await call('POST', '/v1/inbound_transfers', { amount: 1234, account_id: accountId, description: 'Q3 funding' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ amount: 1234, description: 'Q3 funding', status: 'pending' });
    expect(res.body.id).toMatch(/^inbound_transfer_[0-9a-z]{26}$/);
    expect(res.headers.get('location')).toBe(`/v1/inbound_transfers/${res.body.id as string}`);
    expect((await call('GET', `/v1/inbound_transfers/${res.body.id as string}`)).body).toEqual(res.body);
    const list = await call('GET', '/v1/inbound_transfers');
    expect((list.body.results as { id: string }[]).map((r) => r.id)).toContain(res.body.id);
    const events = await t.db
      .selectFrom('events')
      .selectAll()
      .where('associated_object_id', '=', res.body.id as string)
      .execute();
    expect(events.map((e) => [e.category, e.associated_object_type, e.environment])).toEqual([
      ['inbound_transfer.created', 'inbound_transfer', 'sandbox'],
    ]);
  });

  it('completing one posts exactly one ledger transfer into the available balance; a second complete is refused (412) and posts nothing', async () => {
    const before = await balance();
    const id = await create(2500);
    expect(await balance()).toMatchObject({ current_balance: before.current_balance, available_balance: before.available_balance });
    const done = await call('POST', `/v1/simulations/inbound_transfers/${id}/complete`);
    expect(done.status).toBe(202);
    expect((await call('GET', `/v1/inbound_transfers/${id}`)).body.status).toBe('completed');
    expect(await balance()).toMatchObject({
      current_balance: before.current_balance + 2500,
      available_balance: before.available_balance + 2500,
    });
    const deposits = await depositsOf(id);
    expect(deposits.map((d) => [d.kind, d.environment])).toEqual([['deposit', 'sandbox']]);
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });

    const again = await call('POST', `/v1/simulations/inbound_transfers/${id}/complete`);
    expectProblem(again, 412, 'precondition');
    expect(again.body.detail).toMatch(/completed/);
    expect(await depositsOf(id)).toHaveLength(1);
    expectProblem(await call('POST', `/v1/simulations/inbound_transfers/${id}/fail`), 412, 'precondition');
    // Canceled after it completed: too late (the published 412).
    expectProblem(await call('POST', `/v1/inbound_transfers/${id}/cancel`), 412, 'precondition');
    expect((await balance()).available_balance).toBe(before.available_balance + 2500);

    const events = await t.db
      .selectFrom('events')
      .select('category')
      .where('associated_object_id', '=', id)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    expect(events.map((e) => e.category)).toEqual(['inbound_transfer.created', 'inbound_transfer.updated']);
  });

  it('failing or canceling one moves no money, and it can then neither complete nor change again', async () => {
    const before = await balance();
    const failed = await create(700);
    expect((await call('POST', `/v1/simulations/inbound_transfers/${failed}/fail`)).status).toBe(202);
    expect((await call('GET', `/v1/inbound_transfers/${failed}`)).body.status).toBe('failed');
    const canceled = await create(800);
    const cancel = await call('POST', `/v1/inbound_transfers/${canceled}/cancel`);
    expect(cancel.status).toBe(200);
    expect(cancel.body).toMatchObject({ id: canceled, status: 'canceled' });
    for (const id of [failed, canceled]) {
      expectProblem(await call('POST', `/v1/simulations/inbound_transfers/${id}/complete`), 412, 'precondition');
      expectProblem(await call('POST', `/v1/inbound_transfers/${id}/cancel`), 412, 'precondition');
      expect(await depositsOf(id)).toEqual([]);
    }
    expect(await balance()).toMatchObject({ current_balance: before.current_balance, available_balance: before.available_balance });
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
  });

  it('one Idempotency-Key sent four times at once creates one transfer, and every answer is the first', async () => {
    const headers = { 'idempotency-key': `fund-${Date.now()}` };
    const send = () =>
      apiRequest(server, 'sandbox', 'POST', '/v1/inbound_transfers', {
        bearer: sandboxKey,
        headers,
        json: { amount: 4100, account_id: accountId },
      });
    const answers = await Promise.all([send(), send(), send(), send()]);
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201]);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    const rows = await t.db.selectFrom('inbound_transfers').select('id').where('amount', '=', '4100').execute();
    expect(rows).toHaveLength(1);
    // The same key with another amount is another request: refused, nothing created.
    const other = await apiRequest(server, 'sandbox', 'POST', '/v1/inbound_transfers', {
      bearer: sandboxKey,
      headers,
      json: { amount: 4200, account_id: accountId },
    });
    expect(other.status).toBe(409);
    expect(await t.db.selectFrom('inbound_transfers').select('id').where('amount', '=', '4200').execute()).toHaveLength(0);
  });

  it('8 concurrent completes of one transfer post it once: one 202, seven 412', async () => {
    const before = await balance();
    const id = await create(999);
    const answers = await Promise.all(Array.from({ length: 8 }, () => call('POST', `/v1/simulations/inbound_transfers/${id}/complete`)));
    expect(answers.map((a) => a.status).sort()).toEqual([202, 412, 412, 412, 412, 412, 412, 412]);
    expect(await depositsOf(id)).toHaveLength(1);
    expect((await balance()).available_balance).toBe(before.available_balance + 999);
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
  });

  it("the ledger's unique reference guards the deposit too: one posted around the service makes completion refused (412), the transfer left pending", async () => {
    const id = await create(321);
    const account = await t.db.selectFrom('financial_accounts').selectAll().where('id', '=', accountId).executeTakeFirstOrThrow();
    const external = await t.db.transaction().execute((trx) => externalLedgerAccount(trx, 'sandbox'));
    await postTransfer(t.db, {
      environment: 'sandbox',
      kind: 'deposit',
      reference: { type: 'inbound_transfer', id },
      entries: [
        { accountId: external, amount: -321 },
        { accountId: account.available_ledger_account_id, amount: 321 },
      ],
    });
    const scope = { organizationId: account.organization_id, environment: 'sandbox' as const };
    await expect(completeInboundTransfer(t.db, { scope }, id)).rejects.toMatchObject({ code: 'precondition' });
    expect(await depositsOf(id)).toHaveLength(1);
    expect((await call('GET', `/v1/inbound_transfers/${id}`)).body.status).toBe('pending');
  });

  it("refuses bad amounts (0, negative, 1.5, a string, too large, missing) with 400 naming amount, and an account not the caller's naming account_id", async () => {
    for (const amount of [0, -5, 1.5, '100', 10_000_000_001, undefined]) {
      const res = await call('POST', '/v1/inbound_transfers', { amount, account_id: accountId });
      expectProblem(res, 400, 'invalid');
      expect(res.body.detail, String(amount)).toMatch(/amount/);
    }
    const elsewhere = await call('POST', '/v1/inbound_transfers', { amount: 100, account_id: productionAccountId });
    expectProblem(elsewhere, 400, 'invalid');
    expect(elsewhere.body.detail).toMatch(/account_id/);
    const missing = await call('POST', '/v1/inbound_transfers', { amount: 100 });
    expectProblem(missing, 400, 'invalid');
    expect(missing.body.detail).toMatch(/account_id/);
  });

  it("answers another grantmaker's transfer 404 everywhere, a nonprofit 403, and the simulations 404 in production", async () => {
    const id = await create(100);
    for (const [method, path] of [
      ['GET', `/v1/inbound_transfers/${id}`],
      ['POST', `/v1/inbound_transfers/${id}/cancel`],
      ['POST', `/v1/simulations/inbound_transfers/${id}/complete`],
      ['POST', `/v1/simulations/inbound_transfers/${id}/fail`],
    ] as const) {
      expectProblem(await call(method, path, undefined, otherKey), 404, 'not_found');
    }
    expect(((await call('GET', '/v1/inbound_transfers', undefined, otherKey)).body.results as unknown[]).length).toBe(0);
    expectProblem(await call('GET', '/v1/inbound_transfers', undefined, nonprofitKey), 403, 'forbidden');
    expectProblem(await call('POST', '/v1/inbound_transfers', { amount: 100, account_id: accountId }, nonprofitKey), 403, 'forbidden');

    const production = await call(
      'POST',
      '/v1/inbound_transfers',
      { amount: 100, account_id: productionAccountId },
      productionKey,
      'production',
    );
    expect(production.status).toBe(201);
    for (const action of ['complete', 'fail']) {
      const res = await call(
        'POST',
        `/v1/simulations/inbound_transfers/${production.body.id as string}/${action}`,
        undefined,
        productionKey,
        'production',
      );
      expectProblem(res, 404, 'not_found');
      expect(res.body.detail).toMatch(/sandbox only/);
    }
    expect(
      (await call('GET', `/v1/inbound_transfers/${production.body.id as string}`, undefined, productionKey, 'production')).body.status,
    ).toBe('pending');
  });

  it('pages newest first with limit and pageToken', async () => {
    const ids = [await create(1), await create(2), await create(3)];
    const first = await call('GET', '/v1/inbound_transfers?limit=2');
    expect((first.body.results as { id: string }[]).map((r) => r.id)).toEqual([ids[2], ids[1]]);
    const token = first.body.nextPageToken as string;
    const second = await call('GET', `/v1/inbound_transfers?limit=2&pageToken=${token}`);
    expect((second.body.results as { id: string }[])[0]!.id).toBe(ids[0]);
    expectProblem(await call('GET', '/v1/inbound_transfers?pageToken=nope'), 400, 'invalid');
  });

  it('are served under Api-Version 2026-01-15 too, whose document has the same shapes', async () => {
    const headers = { 'api-version': '2026-01-15' };
    const created = await apiRequest(server, 'sandbox', 'POST', '/v1/inbound_transfers', {
      bearer: sandboxKey,
      headers,
      json: { amount: 42, account_id: accountId },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('api-version')).toBe('2026-01-15');
    const completed = await apiRequest(
      server,
      'sandbox',
      'POST',
      `/v1/simulations/inbound_transfers/${created.body.id as string}/complete`,
      {
        bearer: sandboxKey,
        headers,
      },
    );
    expect(completed.status).toBe(202);
    const got = await apiRequest(server, 'sandbox', 'GET', `/v1/inbound_transfers/${created.body.id as string}`, {
      bearer: sandboxKey,
      headers,
    });
    expect(got.body.status).toBe('completed');
    const balance = await apiRequest(server, 'sandbox', 'GET', `/v1/financial_accounts/${accountId}/balance`, {
      bearer: sandboxKey,
      headers,
    });
    expect(balance.status).toBe(200);
    expect((await apiRequest(server, 'sandbox', 'GET', '/v1/programs', { bearer: sandboxKey, headers })).status).toBe(200);
  });
});
