import { beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { apiRequest } from '../helpers/gateway.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * A grantmaker's financial accounts and programs (docs/grantmaking.md): made when the
 * grantmaker is added, one of each per environment, balances read from the ledger, and only
 * the grantmaker's own (another's ids are not found, other kinds are refused).
 */

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const GRANTMAKER_EIN = '71-1000001';
const OTHER_EIN = '71-1000002';
let grantmakerId: string;
let sandboxKey: string;
let productionKey: string;
let otherKey: string;
let nonprofitKey: string;

beforeAll(async () => {
  grantmakerId = (await addOrganization(t.db, { ein: GRANTMAKER_EIN, name: 'Riverside Foundation', kind: 'grantmaker' })).id;
  await addOrganization(t.db, { ein: OTHER_EIN, name: 'Hillside Foundation', kind: 'grantmaker' });
  await addOrganization(t.db, { ein: '71-1000003', name: 'Riverside Food Bank', kind: 'nonprofit' });
  sandboxKey = (await createApiKey(t.db, { org: GRANTMAKER_EIN, environment: 'sandbox' })).key;
  productionKey = (await createApiKey(t.db, { org: GRANTMAKER_EIN, environment: 'production' })).key;
  otherKey = (await createApiKey(t.db, { org: OTHER_EIN, environment: 'sandbox' })).key;
  nonprofitKey = (await createApiKey(t.db, { org: '71-1000003', environment: 'sandbox' })).key;
});

const get = (path: string, bearer = sandboxKey, environment: 'sandbox' | 'production' = 'sandbox') =>
  apiRequest(server, environment, 'GET', path, { bearer });

describe('provisioning a grantmaker', () => {
  it('makes, per environment, a disbursements account over a pair of ledger accounts and a default program, in one transaction', async () => {
    const accounts = await t.db.selectFrom('financial_accounts').selectAll().where('organization_id', '=', grantmakerId).execute();
    expect(accounts.map((a) => a.environment).sort()).toEqual(['production', 'sandbox']);
    for (const account of accounts) {
      expect(account.id).toMatch(/^account_[0-9a-z]{26}$/);
      expect(account.account_type).toBe('disbursements');
      expect(account.bank_provider).toBe(account.environment === 'sandbox' ? 'mock_alpha' : 'manual');
      const ledger = await t.db
        .selectFrom('ledger_accounts')
        .select(['id', 'purpose', 'environment', 'organization_id'])
        .where('id', 'in', [account.available_ledger_account_id, account.held_ledger_account_id])
        .orderBy('purpose')
        .execute();
      expect(ledger).toEqual([
        { id: account.available_ledger_account_id, purpose: 'available', environment: account.environment, organization_id: grantmakerId },
        { id: account.held_ledger_account_id, purpose: 'held', environment: account.environment, organization_id: grantmakerId },
      ]);
    }
    const programs = await t.db.selectFrom('programs').selectAll().where('organization_id', '=', grantmakerId).execute();
    expect(programs.map((p) => p.environment).sort()).toEqual(['production', 'sandbox']);
    // One external account per environment, shared by every grantmaker.
    const external = await t.db.selectFrom('platform_ledger_accounts').selectAll().execute();
    expect(external.map((e) => e.environment).sort()).toEqual(['production', 'sandbox']);
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
  });

  it('gives a nonprofit one processing account per environment, and no disbursements account or program', async () => {
    const nonprofit = await t.db.selectFrom('organizations').select('id').where('kind', '=', 'nonprofit').executeTakeFirstOrThrow();
    const rows = await t.db
      .selectFrom('financial_accounts')
      .select(['environment', 'account_type'])
      .where('organization_id', '=', nonprofit.id)
      .orderBy('environment')
      .execute();
    expect(rows).toEqual([
      { environment: 'production', account_type: 'processing' },
      { environment: 'sandbox', account_type: 'processing' },
    ]);
    expect(await t.db.selectFrom('programs').select('id').where('organization_id', '=', nonprofit.id).execute()).toEqual([]);
  });

  it('rolls the organization back when provisioning fails (a duplicate EIN leaves no second set)', async () => {
    const before = await t.db.selectFrom('financial_accounts').select('id').execute();
    await expect(addOrganization(t.db, { ein: GRANTMAKER_EIN, name: 'Again', kind: 'grantmaker' })).rejects.toThrow(/already exists/);
    expect(await t.db.selectFrom('financial_accounts').select('id').execute()).toHaveLength(before.length);
  });
});

describe('GET /v1/financial_accounts', () => {
  it("lists the caller's account of its environment, gets it, and reads a zero balance from the ledger", async () => {
    const list = await get('/v1/financial_accounts');
    expect(list.status).toBe(200);
    const results = list.body.results as { id: string; name: string; account_type: string; bank_provider: string }[];
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ name: 'Disbursements', account_type: 'disbursements', bank_provider: 'mock_alpha' });
    const one = await get(`/v1/financial_accounts/${results[0]!.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(results[0]);
    const balance = await get(`/v1/financial_accounts/${results[0]!.id}/balance`);
    expect(balance.status).toBe(200);
    expect(balance.body).toMatchObject({ current_balance: 0, available_balance: 0 });
    expect(Date.parse(balance.body.timestamp as string)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('shows production its own account (bank provider manual), and each environment none of the other', async () => {
    const production = await get('/v1/financial_accounts', productionKey, 'production');
    const [account] = production.body.results as { id: string; bank_provider: string }[];
    expect(account!.bank_provider).toBe('manual');
    expect((await get(`/v1/financial_accounts/${account!.id}`)).status).toBe(404);
  });

  it("answers another organization's account 404; a nonprofit sees its processing account only", async () => {
    const [own] = (await get('/v1/financial_accounts')).body.results as { id: string }[];
    for (const key of [otherKey, nonprofitKey])
      for (const path of [`/v1/financial_accounts/${own!.id}`, `/v1/financial_accounts/${own!.id}/balance`]) {
        const res = await get(path, key);
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('not_found');
      }
    const mine = await get('/v1/financial_accounts', nonprofitKey);
    expect(mine.status).toBe(200);
    expect((mine.body.results as { account_type: string }[]).map((a) => a.account_type)).toEqual(['processing']);
  });
});

describe('GET /v1/programs', () => {
  it('lists and gets the default program; another grantmaker gets 404, a nonprofit 403', async () => {
    const list = await get('/v1/programs');
    expect(list.status).toBe(200);
    const results = list.body.results as { id: string }[];
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ name: 'Grantmaking', grant_disbursement_status: 'enabled', gift_processing_status: 'disabled' });
    expect(results[0]!.id).toMatch(/^program_[0-9a-z]{26}$/);
    expect(list.body.next_page_token).toBeUndefined();
    expect((await get(`/v1/programs/${results[0]!.id}`)).body).toEqual(results[0]);
    expect((await get(`/v1/programs/${results[0]!.id}`, otherKey)).status).toBe(404);
    expect((await get('/v1/programs', nonprofitKey)).status).toBe(403);
  });

  it('refuses a bad limit or cursor with 400 naming the parameter', async () => {
    const limit = await get('/v1/programs?limit=0');
    expect(limit.status).toBe(400);
    expect(limit.body.detail).toMatch(/limit/);
    const cursor = await get('/v1/programs?cursor=nonsense');
    expect(cursor.status).toBe(400);
    expect(cursor.body.detail).toMatch(/cursor/);
  });
});
