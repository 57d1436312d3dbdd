import { beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { importBmfFile } from '../../src/directory/import-service.js';
import { bmfLine, writeBmfFile } from '../helpers/bmf.js';
import { apiRequest } from '../helpers/gateway.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * "Disbursements need a second person to approve" over the API (docs/grantmaking.md, "Approvals
 * by another person"): with it on, the API key that created a disbursement is refused its
 * approval (403, one by one and in bulk, where then none is approved); another key of the
 * grantmaker approves it. With it off, the creator approves as before.
 */

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const EIN = '73-2000001';
let creatorKey: string;
let otherKey: string;
let recipientId: string;
let orgId: string;

beforeAll(async () => {
  await importBmfFile(t.db, writeBmfFile([bmfLine({ EIN: '840000201', NAME: 'LAKESIDE LITERACY CENTER' })]));
  recipientId = (await t.db.selectFrom('directory_organizations').select('id').where('ein', '=', '840000201').executeTakeFirstOrThrow()).id;
  orgId = (await addOrganization(t.db, { ein: EIN, name: 'Lakeside Foundation', kind: 'grantmaker' })).id;
  creatorKey = (await createApiKey(t.db, { org: EIN, environment: 'sandbox' })).key;
  otherKey = (await createApiKey(t.db, { org: EIN, environment: 'sandbox' })).key;
  const account = ((await call('GET', '/v1/financial_accounts')).body.results as { id: string }[])[0]!.id;
  const deposit = await call('POST', '/v1/inbound_transfers', { amount: 100_000, account_id: account });
  expect((await call('POST', `/v1/simulations/inbound_transfers/${deposit.body.id as string}/complete`)).status).toBe(202);
});

function call(method: string, path: string, json?: unknown, bearer = creatorKey) {
  return apiRequest(server, 'sandbox', method, path, { bearer, json });
}

async function create(amount: number): Promise<string> {
  const res = await call('POST', '/v1/disbursements', {
    organization_id: recipientId,
    amount,
    transactions: [{ amount, type: 'donor_advised_fund_grant' }],
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

async function setting(required: boolean) {
  await t.db.updateTable('organizations').set({ require_second_approver: required }).where('id', '=', orgId).execute();
}

async function statusOf(id: string) {
  return (await call('GET', `/v1/disbursements/${id}`)).body.status;
}

describe('approvals by another person', () => {
  it('is off by default: the key that created a disbursement approves it', async () => {
    await setting(false);
    const id = await create(1_000);
    const res = await call('POST', `/v1/disbursements/${id}/approve`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.status).toBe('submitted');
  });

  it('refuses the creating key 403, saying a different person or API key must approve, and changes nothing; another key approves', async () => {
    await setting(true);
    const id = await create(2_000);
    const refused = await call('POST', `/v1/disbursements/${id}/approve`);
    expect(refused.status, JSON.stringify(refused.body)).toBe(403);
    expect(refused.body).toMatchObject({ status: 403, code: 'forbidden' });
    expect(String(refused.body.detail)).toContain('a different person or API key to approve it');
    expect(String(refused.body.detail)).toContain(id);
    expect(await statusOf(id)).toBe('pending_approval');
    const holds = await t.db.selectFrom('ledger_transfers').select('id').where('reference_id', '=', id).execute();
    expect(holds).toEqual([]);

    const approved = await call('POST', `/v1/disbursements/${id}/approve`, undefined, otherKey);
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body.status).toBe('submitted');
    // An API key's approval has no person's address to show.
    expect(approved.body.approval).toEqual({ approved_at: expect.any(String) });
    const row = await t.db.selectFrom('disbursements').select(['created_by', 'approved_by']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.approved_by).not.toBe(row.created_by);
    expect(row.approved_by).toMatch(/^api_key:/);
  });

  it('refuses a bulk approval that holds one the approving key created: none is approved; another key approves them all', async () => {
    await setting(true);
    const mine = await create(3_000);
    const res = await call(
      'POST',
      '/v1/disbursements',
      {
        organization_id: recipientId,
        amount: 4_000,
        transactions: [{ amount: 4_000, type: 'corporate_match' }],
      },
      otherKey,
    );
    const theirs = res.body.id as string;

    const refused = await call('POST', '/v1/disbursements/approve', { disbursement_ids: [theirs, mine] });
    expect(refused.status, JSON.stringify(refused.body)).toBe(403);
    expect(String(refused.body.detail)).toContain(mine);
    expect([await statusOf(mine), await statusOf(theirs)]).toEqual(['pending_approval', 'pending_approval']);

    // The other key created `theirs`, so it is refused too; a third key approves both.
    const third = (await createApiKey(t.db, { org: EIN, environment: 'sandbox' })).key;
    expect((await call('POST', '/v1/disbursements/approve', { disbursement_ids: [mine, theirs] }, otherKey)).status).toBe(403);
    const approved = await call('POST', '/v1/disbursements/approve', { disbursement_ids: [mine, theirs] }, third);
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body.count).toBe(2);
    expect([await statusOf(mine), await statusOf(theirs)]).toEqual(['submitted', 'submitted']);
  });
});
