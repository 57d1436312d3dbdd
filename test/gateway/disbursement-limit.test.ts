import { beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { loadConfig } from '../../src/config/load.js';
import { importBmfFile } from '../../src/directory/import-service.js';
import { MAX_DISBURSEMENT_CENTS } from '../../src/grantmaking/disbursements-service.js';
import { bmfLine, writeBmfFile } from '../helpers/bmf.js';
import { apiRequest } from '../helpers/gateway.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * The configured per-disbursement limit, max_disbursement_cents (docs/grantmaking.md,
 * "Disbursements"; docs/configuration.md): an amount above it is a 400 naming amount and the
 * limit, one by one and in bulk, and nothing is created.
 */

const LIMIT = 250_000;
const { testDatabase: t, server } = useOAuthServer({ staff: 0, config: { max_disbursement_cents: LIMIT } });
let key: string;
let recipientId: string;

beforeAll(async () => {
  await importBmfFile(t.db, writeBmfFile([bmfLine({ EIN: '840000301', NAME: 'VALLEY LITERACY CENTER' })]));
  recipientId = (await t.db.selectFrom('directory_organizations').select('id').where('ein', '=', '840000301').executeTakeFirstOrThrow()).id;
  await addOrganization(t.db, { ein: '75-1000001', name: 'Valley Foundation', kind: 'grantmaker' });
  key = (await createApiKey(t.db, { org: '75-1000001', environment: 'sandbox' })).key;
});

const body = (amount: number) => ({ organization_id: recipientId, amount, transactions: [{ amount, type: 'donor_advised_fund_grant' }] });
const post = (path: string, json: unknown) => apiRequest(server, 'sandbox', 'POST', path, { bearer: key, json });
const count = async () => (await t.db.selectFrom('disbursements').select('id').execute()).length;

describe('max_disbursement_cents', () => {
  it('refuses an amount above the configured limit with a 400 naming amount and the limit; the limit itself is accepted', async () => {
    const refused = await post('/v1/disbursements', body(LIMIT + 1));
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ status: 400, code: 'invalid' });
    expect(refused.body.detail).toMatch(new RegExp(`^amount: must be at most ${LIMIT} cents`));
    expect(await count()).toBe(0);
    const accepted = await post('/v1/disbursements', body(LIMIT));
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(201);
    expect(accepted.body.amount).toBe(LIMIT);
  });

  it('refuses a bulk create with one item above the limit, naming the item, and creates none of them', async () => {
    const before = await count();
    const refused = await post('/v1/disbursements/bulk', { disbursements: [body(1_000), body(LIMIT + 500)] });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(new RegExp(`^disbursements\\[1\\]: amount: must be at most ${LIMIT} cents`));
    expect(await count()).toBe(before);
  });

  it('defaults to the service maximum, and is read from ALMONER_MAX_DISBURSEMENT_CENTS within 1 to that maximum', () => {
    expect(loadConfig({ env: {} }).max_disbursement_cents).toBe(MAX_DISBURSEMENT_CENTS);
    expect(loadConfig({ env: { ALMONER_MAX_DISBURSEMENT_CENTS: '5000000' } }).max_disbursement_cents).toBe(5_000_000);
    expect(() => loadConfig({ env: { ALMONER_MAX_DISBURSEMENT_CENTS: String(MAX_DISBURSEMENT_CENTS + 1) } })).toThrow(
      /max_disbursement_cents/,
    );
    expect(() => loadConfig({ env: { ALMONER_MAX_DISBURSEMENT_CENTS: '0' } })).toThrow(/max_disbursement_cents/);
  });
});
