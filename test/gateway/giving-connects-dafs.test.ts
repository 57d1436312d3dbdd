import { beforeAll, describe, expect, it } from 'vitest';
import { apiRequest } from '../helpers/gateway.js';
import { directoryOrganizations, givingCaller } from '../helpers/giving.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/** Connects and the DAF directory (docs/giving.md, "Connects" and "DAFs"). */

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
let platform: Awaited<ReturnType<typeof givingCaller>>;
let nonprofit: Awaited<ReturnType<typeof givingCaller>>;
let grantmaker: Awaited<ReturnType<typeof givingCaller>>;
let orgs: Map<string, string>;

beforeAll(async () => {
  orgs = await directoryOrganizations(t.db, [
    { ein: '871000001', name: 'RIVER CLEANUP' },
    { ein: '871000002', name: 'CITY SHELTER' },
  ]);
  platform = await givingCaller(t.db, '87-2000001', 'Give Platform', 'platform');
  nonprofit = await givingCaller(t.db, '87-1000002', 'City Shelter', 'nonprofit');
  grantmaker = await givingCaller(t.db, '87-2000003', 'Some Grantmaker', 'grantmaker');
});

const contact = { email: 'ops@example.org', first_name: 'Op' };

function createConnect(bearer: string, json: unknown, env: 'sandbox' | 'production' = 'sandbox', headers: Record<string, string> = {}) {
  return apiRequest(server, env, 'POST', '/v1/connects', { bearer, json, headers });
}

describe('POST /v1/connects', () => {
  it('creates one connect per creator and nonprofit: 201 with Location, then 200 with the same; no secret', async () => {
    const body = { organization_id: orgs.get('871000001'), contact, name: 'website', metadata: { campaign: 'spring' } };
    const first = await createConnect(platform.sandbox, body);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body.id).toMatch(/^test_[0-9a-z]{26}$/);
    expect(first.headers.get('location')).toBe(`/v1/connects/${String(first.body.id)}`);
    expect(first.body).toMatchObject({ name: 'website', apiKey: '', active: true, metadata: { campaign: 'spring' } });
    expect(first.body.createdBy).toMatch(/^api_key:/);
    const again = await createConnect(platform.sandbox, { ...body, name: 'other' });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.name).toBe('website');
    const read = await apiRequest(server, 'sandbox', 'GET', `/v1/connects/${String(first.body.id)}`, { bearer: platform.sandbox });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(first.body);
  });

  it('gives production connects live_ ids, apart from the sandbox', async () => {
    const res = await createConnect(platform.production, { organization_id: orgs.get('871000001'), contact }, 'production');
    expect(res.status).toBe(201);
    expect(res.body.id).toMatch(/^live_/);
    const fromSandbox = await apiRequest(server, 'sandbox', 'GET', `/v1/connects/${String(res.body.id)}`, { bearer: platform.sandbox });
    expect(fromSandbox.status).toBe(404);
  });

  it('makes one row of a burst of concurrent creates', async () => {
    const body = { organization_id: orgs.get('871000002'), contact };
    const answers = await Promise.all(Array.from({ length: 8 }, () => createConnect(platform.sandbox, body)));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(7);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    const rows = await t.db
      .selectFrom('connects')
      .select('id')
      .where('organization_id', '=', platform.id)
      .where('recipient_organization_id', '=', orgs.get('871000002')!)
      .execute();
    expect(rows).toHaveLength(1);
  });

  it('lets a nonprofit create a connect for itself only, and refuses other kinds', async () => {
    const own = await createConnect(nonprofit.sandbox, { organization_id: orgs.get('871000002'), contact });
    expect(own.status).toBe(201);
    const other = await createConnect(nonprofit.sandbox, { organization_id: orgs.get('871000001'), contact });
    expect(other.status).toBe(403);
    const byGrantmaker = await createConnect(grantmaker.sandbox, { organization_id: orgs.get('871000001'), contact });
    expect(byGrantmaker.status).toBe(403);
  });

  it('answers 404 for an unknown organization and 400 without a contact e-mail', async () => {
    const unknown = await createConnect(platform.sandbox, { organization_id: 'org_00000000000000000000000000000000', contact });
    expect(unknown.status).toBe(404);
    const noEmail = await createConnect(platform.sandbox, { organization_id: orgs.get('871000001'), contact: { phone: '1' } });
    expect(noEmail.status).toBe(400);
  });

  it("hides another organization's connect (404)", async () => {
    const mine = await createConnect(platform.sandbox, { organization_id: orgs.get('871000001'), contact });
    const theirs = await apiRequest(server, 'sandbox', 'GET', `/v1/connects/${String(mine.body.id)}`, { bearer: nonprofit.sandbox });
    expect(theirs.status).toBe(404);
  });

  it('replays under an Idempotency-Key', async () => {
    const headers = { 'Idempotency-Key': 'connect-key-1' };
    const body = { organization_id: orgs.get('871000001'), contact };
    const first = await createConnect(nonprofit.production, { ...body, organization_id: orgs.get('871000002') }, 'production', headers);
    const replay = await createConnect(nonprofit.production, { ...body, organization_id: orgs.get('871000002') }, 'production', headers);
    expect(first.status).toBe(201);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.id).toBe(first.body.id);
  });
});

describe('GET /v1/dafs', () => {
  const list = (query: string, bearer = platform.sandbox, env: 'sandbox' | 'production' = 'sandbox') =>
    apiRequest(server, env, 'GET', `/v1/dafs${query}`, { bearer });

  it('pages through the directory in name order with page tokens', async () => {
    const first = await list('?pageLimit=5');
    expect(first.status).toBe(200);
    const results = first.body.results as { orgName: string }[];
    expect(results).toHaveLength(5);
    const names = results.map((r) => r.orgName);
    expect([...names].sort()).toEqual(names);
    const second = await list(`?pageLimit=5&pageToken=${String(first.body.nextPageToken)}`);
    const next = (second.body.results as { orgName: string }[]).map((r) => r.orgName);
    expect(next[0]! > names[4]!).toBe(true);
    const bad = await list('?pageToken=nonsense');
    expect(bad.status).toBe(400);
    expect((await list('?pageLimit=101')).status).toBe(400);
    expect((await list('')).body.results).toHaveLength(10);
  });

  it('filters by a case-insensitive query and to supported DAFs; the simulated DAF is the sandbox only', async () => {
    const found = await list('?query=fidelity');
    expect((found.body.results as { orgName: string; minimumGrantAmount: number; supported: boolean }[])[0]).toMatchObject({
      orgName: 'Fidelity Charitable',
      minimumGrantAmount: 5000,
      supported: false,
    });
    const supported = await list('?supportedOnly=true');
    expect((supported.body.results as { orgName: string }[]).map((r) => r.orgName)).toEqual(['Sandbox DAF (simulated sign-in)']);
    const production = await list('?supportedOnly=true', platform.production, 'production');
    expect(production.body.results).toEqual([]);
    const byGrantmaker = await list('?query=vanguard', grantmaker.sandbox);
    expect(byGrantmaker.status).toBe(200);
  });

  it('gets one DAF, 404 when unknown', async () => {
    const found = await list('?query=vanguard');
    const id = (found.body.results as { id: string }[])[0]!.id;
    const one = await apiRequest(server, 'sandbox', 'GET', `/v1/dafs/${id}`, { bearer: nonprofit.sandbox });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id, orgName: 'Vanguard Charitable', minimumGrantAmount: 50000, institutionDown: false });
    const unknown = await apiRequest(server, 'sandbox', 'GET', '/v1/dafs/00000000-0000-4000-8000-000000000000', {
      bearer: nonprofit.sandbox,
    });
    expect(unknown.status).toBe(404);
  });
});
