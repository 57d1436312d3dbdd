import { beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { importBmfFile } from '../../src/directory/import-service.js';
import { apiRequest, type ApiResponse } from '../helpers/gateway.js';
import { bmfLine, writeBmfFile } from '../helpers/bmf.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * The published organization operations over the directory (docs/directory.md, "The API"):
 * search, lookup by published id, and the sandbox onboarding simulation; grantmakers only, and
 * platforms for search and lookup.
 */

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const GRANTMAKER_EIN = '56-1000001';
const NONPROFIT_EIN = '56-1000002';
const PLATFORM_EIN = '56-1000003';
let sandboxKey: string;
let productionKey: string;
let nonprofitKey: string;
let platformKey: string;

const lines = [
  bmfLine({ EIN: '840000001', NAME: 'FOOD BANK OF THE ROCKIES', CITY: 'DENVER', STATE: 'CO' }),
  bmfLine({ EIN: '840000002', NAME: 'THE FOOD BANK', CITY: 'BOULDER', STATE: 'CO' }),
  bmfLine({ EIN: '840000003', NAME: 'GOOD BOOKS', CITY: 'AURORA', STATE: 'CO' }),
  bmfLine({ EIN: '840000004', NAME: 'FOOD BASKET', STREET: '', RULING: '' }),
  // The member nonprofit below has this EIN: the directory's row is claimed.
  bmfLine({ EIN: '561000002', NAME: 'MEMBER HELPERS' }),
];

beforeAll(async () => {
  await importBmfFile(t.db, writeBmfFile(lines));
  await addOrganization(t.db, { ein: GRANTMAKER_EIN, name: 'Orgs Grantmaker', kind: 'grantmaker' });
  await addOrganization(t.db, { ein: NONPROFIT_EIN, name: 'Member Helpers', kind: 'nonprofit' });
  sandboxKey = (await createApiKey(t.db, { org: GRANTMAKER_EIN, environment: 'sandbox' })).key;
  productionKey = (await createApiKey(t.db, { org: GRANTMAKER_EIN, environment: 'production' })).key;
  nonprofitKey = (await createApiKey(t.db, { org: NONPROFIT_EIN, environment: 'sandbox' })).key;
  await addOrganization(t.db, { ein: PLATFORM_EIN, name: 'Orgs Platform', kind: 'platform' });
  platformKey = (await createApiKey(t.db, { org: PLATFORM_EIN, environment: 'sandbox' })).key;
});

function get(path: string, bearer = sandboxKey) {
  return apiRequest(server, 'sandbox', 'GET', path, { bearer });
}

function onboard(id: string, settlement: unknown, env: 'sandbox' | 'production' = 'sandbox') {
  return apiRequest(server, env, 'POST', `/v1/simulations/organizations/onboard/${id}`, {
    bearer: env === 'sandbox' ? sandboxKey : productionKey,
    json: { settlement },
  });
}

function names(res: ApiResponse): string[] {
  return (res.body.results as { name: string }[]).map((r) => r.name);
}

async function idOf(ein: string): Promise<string> {
  const res = await get(`/v1/organizations/search?q=${ein}`);
  expect(res.status).toBe(200);
  return (res.body.results as { id: string }[])[0]!.id;
}

function expectBadRequest(res: ApiResponse, field: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.code).toBe('invalid');
  expect(String(res.body.detail)).toContain(field);
}

describe('GET /v1/organizations/search', () => {
  it('finds names as typed, a typo included, prefix matches first, within the limit', async () => {
    const res = await get('/v1/organizations/search?q=food%20bnak');
    expect(res.status).toBe(200);
    expect(names(res)).toContain('FOOD BANK OF THE ROCKIES');
    expect(names(res)).not.toContain('GOOD BOOKS');
    const prefix = await get('/v1/organizations/search?q=food%20ba');
    // Prefix matches first, the shorter (closer) name before the longer (docs/directory.md, "How search ranks").
    expect(names(prefix)).toEqual(['FOOD BASKET', 'FOOD BANK OF THE ROCKIES', 'THE FOOD BANK']);
    const limited = await get('/v1/organizations/search?q=food%20bank&limit=1');
    expect(names(limited)).toEqual(['FOOD BANK OF THE ROCKIES']);
    expect(limited.body.results).toEqual([
      { id: expect.stringMatching(/^org_[0-9a-f]{32}$/), ein: '840000001', name: 'FOOD BANK OF THE ROCKIES', city: 'DENVER', state: 'CO' },
    ]);
  });

  it('finds exactly the organization of an EIN, with or without its dash, in q or the deprecated ein', async () => {
    for (const query of ['q=84-0000002', 'q=840000002', 'ein=84-0000002', 'q=x&ein=840000002']) {
      const res = await get(`/v1/organizations/search?${query}`);
      expect(names(res), query).toEqual(['THE FOOD BANK']);
    }
    expect(names(await get('/v1/organizations/search?q=999999999'))).toEqual([]);
  });

  it('is served alike under API version 2026-01-15, whose document has the same operations', async () => {
    const res = await apiRequest(server, 'sandbox', 'GET', '/v1/organizations/search?q=84-0000002', {
      bearer: sandboxKey,
      headers: { 'api-version': '2026-01-15' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('api-version')).toBe('2026-01-15');
    expect(names(res)).toEqual(['THE FOOD BANK']);
  });

  it('refuses bad input with 400 naming the parameter', async () => {
    expectBadRequest(await get('/v1/organizations/search?q=food&limit=21'), 'limit');
    expectBadRequest(await get('/v1/organizations/search?q=food&limit=two'), 'limit');
    expectBadRequest(await get('/v1/organizations/search'), 'q');
    expectBadRequest(await get('/v1/organizations/search?q=%20-%20'), 'q');
    expectBadRequest(await get('/v1/organizations/search?ein=12345'), 'ein');
  });
});

describe('GET /v1/organizations/{id}', () => {
  it('answers the Organization of a published id, which a re-import keeps', async () => {
    const id = await idOf('840000001');
    const res = await get(`/v1/organizations/${id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id,
      ein: '840000001',
      name: 'FOOD BANK OF THE ROCKIES',
      physical_address: { line1: '100 MAIN ST', city: 'DENVER', state: 'CO', postal_code: '80202-1234', country: 'US' },
      incorporation: { ruling_date: '1985-01' },
      claimed: false,
    });
    await importBmfFile(t.db, writeBmfFile([bmfLine({ EIN: '840000001', NAME: 'FOOD BANK OF THE ROCKIES INC' }), ...lines.slice(1)]));
    expect(await idOf('840000001')).toBe(id);
    expect((await get(`/v1/organizations/${id}`)).body.name).toBe('FOOD BANK OF THE ROCKIES INC');
  });

  it('leaves out what the directory lacks, and says a member nonprofit of the same EIN has claimed it', async () => {
    const basket = await get(`/v1/organizations/${await idOf('840000004')}`);
    expect(basket.body).not.toHaveProperty('physical_address');
    expect(basket.body).not.toHaveProperty('incorporation');
    expect((await get(`/v1/organizations/${await idOf('561000002')}`)).body.claimed).toBe(true);
  });

  it('answers 404 for an unknown id', async () => {
    const res = await get('/v1/organizations/org_00000000000000000000000000000000');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });
});

describe('POST /v1/simulations/organizations/onboard/{id}', () => {
  it('fixes the settlement on the first call: the same again is answered, a different one refused', async () => {
    const id = await idOf('840000002');
    const first = await onboard(id, 'SANDBOX_SETTLEMENT_ACH');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ id, ein: '840000002' });
    expect((await onboard(id, 'SANDBOX_SETTLEMENT_ACH')).status).toBe(200);
    expectBadRequest(await onboard(id, 'SANDBOX_SETTLEMENT_ACCOUNT_TRANSFER'), 'settlement');
    const stored = await t.db.selectFrom('directory_onboardings').selectAll().where('organization_id', '=', id).execute();
    expect(stored.map((r) => r.settlement)).toEqual(['SANDBOX_SETTLEMENT_ACH']);
  });

  it('refuses an unknown rail (400 naming settlement) and an unknown organization (404)', async () => {
    expectBadRequest(await onboard(await idOf('840000003'), 'WIRE'), 'settlement');
    expect((await onboard('org_00000000000000000000000000000000', 'SANDBOX_SETTLEMENT_ACH')).status).toBe(404);
  });

  it('does not exist in production (404)', async () => {
    const res = await onboard(await idOf('840000003'), 'SANDBOX_SETTLEMENT_ACH', 'production');
    expect(res.status).toBe(404);
    expect(
      await t.db
        .selectFrom('directory_onboardings')
        .selectAll()
        .where('organization_id', '=', await idOf('840000003'))
        .execute(),
    ).toEqual([]);
  });
});

describe('POST /v1/nonprofit_addresses and /v1/nonprofit_contacts', () => {
  function upload(path: string, entries: unknown, bearer = sandboxKey) {
    return apiRequest(server, 'sandbox', 'POST', path, { bearer, json: { entries } });
  }

  it('records every address entry for review, by EIN with or without its dash, answering 200 without content', async () => {
    const res = await upload('/v1/nonprofit_addresses', [
      { ein: '84-0000001', line1: '431 18th Street NW', city: 'Washington', state: 'DC', zip: '20006' },
      { ein: '840000002', line1: '1250 24th Street NW', line2: 'Suite 300', city: 'Washington', state: 'DC', zip: '20037-1175' },
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers.get('content-type')).toBeNull();
    const rows = await t.db
      .selectFrom('nonprofit_address_suggestions')
      .select(['ein', 'line1', 'line2', 'zip', 'environment'])
      .orderBy('ein')
      .execute();
    expect(rows).toEqual([
      { ein: '840000001', line1: '431 18th Street NW', line2: null, zip: '20006', environment: 'sandbox' },
      { ein: '840000002', line1: '1250 24th Street NW', line2: 'Suite 300', zip: '20037-1175', environment: 'sandbox' },
    ]);
  });

  it('records contact entries', async () => {
    const res = await upload('/v1/nonprofit_contacts', [
      { ein: '84-0000003', email: 'claims@goodbooks.example', phone: '2025551212', first_name: 'Sarah', last_name: 'Johnson' },
      { ein: '840000003', email: 'ap@goodbooks.example' },
    ]);
    expect(res.status).toBe(200);
    const rows = await t.db
      .selectFrom('nonprofit_contact_suggestions')
      .select(['ein', 'email', 'phone', 'first_name'])
      .orderBy('email')
      .execute();
    expect(rows).toEqual([
      { ein: '840000003', email: 'ap@goodbooks.example', phone: null, first_name: null },
      { ein: '840000003', email: 'claims@goodbooks.example', phone: '2025551212', first_name: 'Sarah' },
    ]);
  });

  it('refuses an upload naming an EIN the directory does not list (404) or a bad entry (400), recording none of it', async () => {
    const before = await t.db.selectFrom('nonprofit_contact_suggestions').select('id').execute();
    const unknown = await upload('/v1/nonprofit_contacts', [
      { ein: '840000003', email: 'kept@goodbooks.example' },
      { ein: '999999999', email: 'who@example.org' },
    ]);
    expect(unknown.status).toBe(404);
    expect(String(unknown.body.detail)).toContain('entries.1 (999999999)');
    expectBadRequest(await upload('/v1/nonprofit_contacts', [{ ein: '840000003', email: 'not an address' }]), 'entries.0.email');
    expectBadRequest(await upload('/v1/nonprofit_contacts', [{ ein: '84000', email: 'a@b.example' }]), 'entries.0.ein');
    expectBadRequest(
      await upload('/v1/nonprofit_addresses', [{ ein: '840000001', line1: 'x', city: 'y', state: 'dc', zip: '1' }]),
      'entries.0.state',
    );
    expectBadRequest(await upload('/v1/nonprofit_addresses', []), 'entries');
    expect(await t.db.selectFrom('nonprofit_contact_suggestions').select('id').execute()).toEqual(before);
  });
});

describe('callers', () => {
  it("lets a nonprofit's key search and read the directory (its own Connect names it by that id), and refuses the rest with 403", async () => {
    const id = await idOf('840000001');
    const found = await get(`/v1/organizations/search?ein=${NONPROFIT_EIN}`, nonprofitKey);
    expect(found.status).toBe(200);
    expect((found.body.results as { ein: string }[]).map((r) => r.ein)).toEqual([NONPROFIT_EIN.replace('-', '')]);
    expect((await get(`/v1/organizations/${id}`, nonprofitKey)).status).toBe(200);
    for (const res of [
      await apiRequest(server, 'sandbox', 'POST', `/v1/simulations/organizations/onboard/${id}`, {
        bearer: nonprofitKey,
        json: { settlement: 'SANDBOX_SETTLEMENT_ACH' },
      }),
      await apiRequest(server, 'sandbox', 'POST', '/v1/nonprofit_addresses', {
        bearer: nonprofitKey,
        json: { entries: [{ ein: '840000001', line1: 'x', city: 'y', state: 'DC', zip: '20006' }] },
      }),
      await apiRequest(server, 'sandbox', 'POST', '/v1/nonprofit_contacts', {
        bearer: nonprofitKey,
        json: { entries: [{ ein: '840000001', email: 'a@b.example' }] },
      }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('forbidden');
    }
  });

  it("lets a platform's key search and read the directory (a Connect names its nonprofit by that id), and nothing else", async () => {
    const found = await get('/v1/organizations/search?ein=84-0000001', platformKey);
    expect(found.status).toBe(200);
    const [first] = found.body.results as { id: string; ein: string; name: string }[];
    expect(first).toMatchObject({ ein: '840000001' });
    const one = await get(`/v1/organizations/${first!.id}`, platformKey);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: first!.id, ein: '840000001' });
    for (const res of [
      await apiRequest(server, 'sandbox', 'POST', `/v1/simulations/organizations/onboard/${first!.id}`, {
        bearer: platformKey,
        json: { settlement: 'SANDBOX_SETTLEMENT_ACH' },
      }),
      await apiRequest(server, 'sandbox', 'POST', '/v1/nonprofit_contacts', {
        bearer: platformKey,
        json: { entries: [{ ein: '840000001', email: 'a@b.example' }] },
      }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('forbidden');
    }
  });
});
