import { beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { importBmfFile } from '../../src/directory/import-service.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { bmfLine, writeBmfFile } from '../helpers/bmf.js';
import { apiRequest } from '../helpers/gateway.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * The disbursement operations under Api-Version 2026-01-15 (docs/grantmaking.md, "Under
 * 2026-01-15"): that document's transaction (`description`, `donor_advised_fund_grant`), no
 * `idempotency_key`, the one donation type. apiRequest checks every answer against the published
 * 2026-01-15 operation and our served 2026-01-15 document. What one version writes, the other reads.
 */

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const OLD = '2026-01-15';
let key: string;
let accountId: string;
let recipientId: string;

beforeAll(async () => {
  await importBmfFile(t.db, writeBmfFile([bmfLine({ EIN: '840000501', NAME: 'PRAIRIE ARTS COUNCIL' })]));
  recipientId = (await t.db.selectFrom('directory_organizations').select('id').where('ein', '=', '840000501').executeTakeFirstOrThrow()).id;
  await addOrganization(t.db, { ein: '77-1000001', name: 'Prairie Foundation', kind: 'grantmaker' });
  key = (await createApiKey(t.db, { org: '77-1000001', environment: 'sandbox' })).key;
  accountId = ((await call('GET', '/v1/financial_accounts')).body.results as { id: string }[])[0]!.id;
  const transfer = await call('POST', '/v1/inbound_transfers', { amount: 100_000, account_id: accountId });
  expect((await call('POST', `/v1/simulations/inbound_transfers/${transfer.body.id as string}/complete`)).status).toBe(202);
});

function call(method: string, path: string, json?: unknown, version?: string, headers: Record<string, string> = {}) {
  return apiRequest(server, 'sandbox', method, path, {
    bearer: key,
    json,
    headers: { ...(version ? { 'api-version': version } : {}), ...headers },
  });
}

const grant = {
  grant_id: 'GR-2026-17',
  organization_name: 'Prairie Charitable',
  fund_name: 'Ortiz Family Fund',
  purpose: 'General operating support',
  note: 'For the spring season',
  donors: [
    { first_name: 'Ana', last_name: 'Ortiz' },
    { full_name: 'Luis Ortiz', email: 'luis@example.org' },
  ],
};

const oldBody = (amount: number, transaction: Record<string, unknown> = {}) => ({
  organization_id: recipientId,
  amount,
  transactions: [{ amount, type: 'donor_advised_fund_grant', ...transaction }],
});

describe('disbursements under 2026-01-15', () => {
  it("create with that document's transaction, answer without idempotency_key, and read back in 2026-04-01's fields", async () => {
    const created = await call(
      'POST',
      '/v1/disbursements',
      oldBody(3_000, { description: 'Spring grant', donor_advised_fund_grant: grant, metadata: { batch: '7' } }),
      OLD,
      { 'idempotency-key': 'old-version-create-1' },
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.headers.get('api-version')).toBe(OLD);
    expect(created.body).not.toHaveProperty('idempotency_key');
    expect(created.body).toMatchObject({ status: 'pending_approval', amount: 3_000, organization_id: recipientId });
    const [transaction] = created.body.transactions as Record<string, unknown>[];
    expect(transaction).toMatchObject({
      amount: 3_000,
      net_amount: 3_000,
      type: 'donor_advised_fund_grant',
      description: 'Spring grant',
      donor_advised_fund_grant: grant,
      metadata: { batch: '7' },
    });
    for (const later of ['internal_transaction_id', 'purpose', 'note', 'donors', 'daf_grant', 'recipient_name'])
      expect(transaction).not.toHaveProperty(later);

    const current = await call('GET', `/v1/disbursements/${created.body.id as string}`);
    expect(current.body.idempotency_key).toBe('old-version-create-1');
    const [now] = current.body.transactions as Record<string, unknown>[];
    expect(now).toMatchObject({
      internal_transaction_id: 'GR-2026-17',
      purpose: 'General operating support',
      note: 'For the spring season',
      donors: { primary_donor: grant.donors[0], joint_donor: grant.donors[1] },
      daf_grant: { fund_name: 'Ortiz Family Fund' },
      metadata: { batch: '7' },
    });
    expect(now).not.toHaveProperty('description');
    expect(now).not.toHaveProperty('daf_organization_name');
    expect((await call('GET', `/v1/disbursements/${created.body.id as string}`, undefined, OLD)).body).toEqual(created.body);
  });

  it("shows a 2026-04-01 disbursement's transaction as a donor_advised_fund_grant", async () => {
    const made = await call('POST', '/v1/disbursements', {
      organization_id: recipientId,
      amount: 1_000,
      transactions: [
        {
          amount: 1_000,
          type: 'donor_advised_fund_grant',
          internal_transaction_id: 'GM-1',
          purpose: 'Capital campaign',
          daf_grant: { fund_name: 'Lee Fund' },
          donors: { primary_donor: { full_name: 'May Lee' } },
        },
      ],
    });
    expect(made.status).toBe(201);
    const old = await call('GET', `/v1/disbursements/${made.body.id as string}`, undefined, OLD);
    expect(old.status).toBe(200);
    expect((old.body.transactions as Record<string, unknown>[])[0]).toMatchObject({
      donor_advised_fund_grant: {
        grant_id: 'GM-1',
        purpose: 'Capital campaign',
        fund_name: 'Lee Fund',
        donors: [{ full_name: 'May Lee' }],
      },
    });
  });

  it("refuses 2026-04-01's fields and types, more than two donors, and the idempotency_key filter, each naming the field", async () => {
    const refusals: [unknown, RegExp][] = [
      [oldBody(500, { internal_transaction_id: 'X' }), /internal_transaction_id/],
      [oldBody(500, { type: 'corporate_match' }), /transactions\.0\.type|type/],
      [oldBody(500, { donor_advised_fund_grant: { donors: [{}, {}, {}] } }), /donors/],
      [oldBody(500, { donor_advised_fund_grant: { purpose: 'x'.repeat(401) } }), /purpose/],
    ];
    for (const [body, field] of refusals) {
      const res = await call('POST', '/v1/disbursements', body, OLD);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(JSON.stringify(res.body)).toMatch(field);
    }
    const listed = await call('GET', '/v1/disbursements?idempotency_key=abc', undefined, OLD);
    expect(listed.status).toBe(400);
    expect(JSON.stringify(listed.body)).toMatch(/idempotency_key/);
  });

  it('approves, completes, cancels, creates and approves in bulk, and lists, in the old shapes', async () => {
    const first = (await call('POST', '/v1/disbursements', oldBody(2_000), OLD)).body.id as string;
    const approved = await call('POST', `/v1/disbursements/${first}/approve`, undefined, OLD);
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'submitted', approval: { approved_at: expect.any(String) } });
    expect((await call('POST', `/v1/simulations/disbursements/${first}/complete`, undefined, OLD)).status).toBe(202);
    expect((await call('GET', `/v1/disbursements/${first}`, undefined, OLD)).body.status).toBe('completed');

    const second = (await call('POST', '/v1/disbursements', oldBody(700), OLD)).body.id as string;
    const canceled = await call('POST', `/v1/disbursements/${second}/cancel`, undefined, OLD);
    expect(canceled.body).toMatchObject({ status: 'canceled', cancelation: { canceled_at: expect.any(String) } });

    const bulk = await call(
      'POST',
      '/v1/disbursements/bulk',
      { disbursements: [oldBody(300, { description: 'one' }), oldBody(400, { donor_advised_fund_grant: { fund_name: 'F' } })] },
      OLD,
    );
    expect(bulk.status, JSON.stringify(bulk.body)).toBe(201);
    expect(bulk.body.count).toBe(2);
    const ids = (bulk.body.disbursements as { id: string }[]).map((d) => d.id);
    const approvedAll = await call('POST', '/v1/disbursements/approve', { disbursement_ids: ids }, OLD);
    expect(approvedAll.status).toBe(200);
    expect((approvedAll.body.disbursements as { status: string }[]).map((d) => d.status)).toEqual(['submitted', 'submitted']);

    const page = await call('GET', '/v1/disbursements?page_limit=2', undefined, OLD);
    expect(page.status).toBe(200);
    expect((page.body.results as { id: string }[]).map((d) => d.id)).toEqual([ids[1], ids[0]]);
    expect(page.body.next_page_token).toEqual(expect.any(String));
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
  });

  it('leaves out a corporate match, which that document has no type for: not listed, 404 to read or approve, and it stays pending', async () => {
    const match = await call('POST', '/v1/disbursements', {
      organization_id: recipientId,
      amount: 900,
      transactions: [{ amount: 900, type: 'corporate_match', corporate_match: { company_name: 'Acme' } }],
    });
    expect(match.status).toBe(201);
    const id = match.body.id as string;
    expect((await call('GET', `/v1/disbursements/${id}`, undefined, OLD)).status).toBe(404);
    expect((await call('POST', `/v1/disbursements/${id}/approve`, undefined, OLD)).status).toBe(404);
    expect((await call('POST', '/v1/disbursements/approve', { disbursement_ids: [id] }, OLD)).status).toBe(404);
    const listed = (await call('GET', '/v1/disbursements', undefined, OLD)).body.results as { id: string }[];
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.map((d) => d.id)).not.toContain(id);
    expect((await call('GET', `/v1/disbursements/${id}`)).body.status).toBe('pending_approval');
  });
});
