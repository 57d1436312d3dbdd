import { beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { accessToken, apiGet, apiKeyFor, seedData } from '../helpers/gateway.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const {
  testDatabase: t,
  server,
  allStaff: [staff, other],
} = useOAuthServer({ staff: 2 });
let key: string;
let token: string;
let seeded: Awaited<ReturnType<typeof seedData>>;
let otherSeeded: Awaited<ReturnType<typeof seedData>>;
let sandboxSeeded: Awaited<ReturnType<typeof seedData>>;
const REDIRECT = 'https://app.example.org/callback';

beforeAll(async () => {
  seeded = await seedData(t.db, staff, 'production', { donations: 137, connects: 3, grantsPerConnect: 9 });
  // Rows sharing one created_at must still page exactly once.
  await t.db
    .updateTable('donations')
    .set({ created_at: new Date('2026-05-05T05:05:05Z') } as never)
    .where('id', 'in', seeded.donation_ids.slice(0, 40))
    .execute();
  otherSeeded = await seedData(t.db, other, 'production', { donations: 5 });
  sandboxSeeded = await seedData(t.db, staff, 'sandbox', { donations: 5 });
  key = await apiKeyFor(t.db, staff, 'production');
  const client = await server.registerClient({ environment: 'production', redirectUris: [REDIRECT], scopes: ['read_only'] });
  token = await accessToken(server, client, {
    environment: 'production',
    redirectUri: REDIRECT,
    scope: 'read_only',
    login: staff.users.member,
  });
});

const get = (path: string, headers: Record<string, string> = {}, bearer = token) => apiGet(server, 'production', path, { bearer, headers });

async function walk(path: string, tokenParam: string, nextField: string, limitParam: string, limit: number) {
  const seen: string[] = [];
  let next: string | undefined | null;
  let pages = 0;
  do {
    const url = `${path}${path.includes('?') ? '&' : '?'}${limitParam}=${limit}${next ? `&${tokenParam}=${encodeURIComponent(next)}` : ''}`;
    const res = await get(url);
    expect(res.status).toBe(200);
    const results = res.body.results as { id: string }[];
    expect(results.length).toBeLessThanOrEqual(limit);
    seen.push(...results.map((r) => r.id));
    next = res.body[nextField] as string | undefined | null;
    pages += 1;
  } while (next && pages < 200);
  return { seen, pages };
}

describe('donations', () => {
  it("list the authorizing nonprofit's donations, newest first, matching the published schema in both versions", async () => {
    for (const version of ['2026-04-01', '2026-01-15'] as const) {
      const res = await get('/v1/donations?limit=5', { 'api-version': version });
      expect(res.status).toBe(200);
      expect(res.headers.get('api-version')).toBe(version);
      const results = res.body.results as { created_at: string; external_id?: string }[];
      expect(results).toHaveLength(5);
      expect([...results].sort((a, b) => b.created_at.localeCompare(a.created_at))).toEqual(results);
      expect(results[0]!.external_id !== undefined).toBe(version === '2026-04-01');
    }
  });

  it('walk every row exactly once with page_token, ties on created_at included', async () => {
    const { seen, pages } = await walk('/v1/donations', 'page_token', 'next_page_token', 'limit', 7);
    expect(seen).toHaveLength(137);
    expect(new Set(seen)).toEqual(new Set(seeded.donation_ids));
    expect(pages).toBe(20);
  });

  it('filter by payment source, deposit and creation time', async () => {
    const all = (await get('/v1/donations?limit=100')).body.results as { id: string; payment_source_id: string; created_at: string }[];
    const [a, b] = all;
    const bySource = await get(`/v1/donations?payment_source_id=${a!.payment_source_id},${b!.payment_source_id}`);
    expect((bySource.body.results as { id: string }[]).map((r) => r.id).sort()).toEqual([a!.id, b!.id].sort());
    const after = await get(`/v1/donations?limit=100&created_at.after=${encodeURIComponent(all[10]!.created_at)}`);
    expect((after.body.results as { created_at: string }[]).every((r) => r.created_at > all[10]!.created_at)).toBe(true);
    const before = await get(`/v1/donations?limit=100&created_at.before=${encodeURIComponent(all[10]!.created_at)}`);
    expect((before.body.results as { created_at: string }[]).every((r) => r.created_at < all[10]!.created_at)).toBe(true);
  });

  it('refuse bad parameters with a 400 problem', async () => {
    for (const query of ['limit=0', 'limit=101', 'limit=abc', 'page_token=not-a-token', 'created_at.after=yesterday', 'colour=blue']) {
      const res = await get(`/v1/donations?${query}`);
      expect(res.status, query).toBe(400);
    }
    // dafpay_tracking_id arrived in 2026-04-01.
    expect((await get('/v1/donations?dafpay_tracking_id=X', { 'api-version': '2026-04-01' })).status).toBe(200);
    expect((await get('/v1/donations?dafpay_tracking_id=X', { 'api-version': '2026-01-15' })).status).toBe(400);
  });

  it("get one donation; another nonprofit's or environment's id is 404, never its data", async () => {
    const res = await get(`/v1/donations/${seeded.donation_ids[3]!}`);
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(seeded.donation_ids[3]);
    for (const id of [otherSeeded.donation_ids[0]!, sandboxSeeded.donation_ids[0]!, 'donation_nope']) {
      const missing = await get(`/v1/donations/${id}`);
      expect(missing.status).toBe(404);
      expect(JSON.stringify(missing.body)).not.toContain('amount');
    }
  });
});

describe('grants', () => {
  it("list all the caller's connects' grants by default and one connect with connect_id, per the published schema", async () => {
    const { seen } = await walk('/v1/grants', 'pageToken', 'nextPageToken', 'pageLimit', 10);
    expect(new Set(seen)).toEqual(new Set(seeded.grant_ids));
    expect(seen).toHaveLength(27);
    const one = await get(`/v1/grants?connect_id=${seeded.connect_ids[1]!}&pageLimit=100`);
    expect(one.status).toBe(200);
    expect((one.body.results as unknown[]).length).toBe(9);
    expect(one.body.nextPageToken).toBeNull();
    // Served (and so validated) under each version's document.
    for (const version of ['2026-04-01', '2026-01-15'])
      expect((await get(`/v1/grants?connect_id=${seeded.connect_ids[1]!}&pageLimit=100`, { 'api-version': version })).body).toEqual(
        one.body,
      );
  });

  it('default to 10 per page and need no x-service-api-key header', async () => {
    const res = await get('/v1/grants', {}, key);
    expect(res.status).toBe(200);
    expect((res.body.results as unknown[]).length).toBe(10);
    expect(typeof res.body.nextPageToken).toBe('string');
  });

  it("treat another organization's connect and grant as unknown", async () => {
    // The list documents no 404: a connect_id that is not the caller's is an invalid parameter,
    // worded the same whether it exists elsewhere or nowhere.
    const foreign = await get(`/v1/grants?connect_id=${otherSeeded.connect_ids[0]!}`);
    expect(foreign.status).toBe(400);
    expect(foreign.body.detail).toBe('Invalid query: connect_id names no connect of the caller.');
    expect((await get('/v1/grants?connect_id=live_nowhere')).body).toEqual(foreign.body);
    const otherGrant = (await t.db.selectFrom('grants').select('id').where('organization_id', '=', other.orgId).executeTakeFirstOrThrow())
      .id;
    expect((await get(`/v1/grants/${otherGrant}`)).status).toBe(404);
    expect((await get('/v1/grants/not-a-uuid')).status).toBe(400);
    const mine = await get(`/v1/grants/${seeded.grant_ids[0]!}`);
    expect(mine.status).toBe(200);
  });
});

describe('nonprofit directory', () => {
  it('finds any nonprofit by EIN, dashed or not, with the 2023-01-01 shape under both versions', async () => {
    for (const ein of [other.ein, `${other.ein.slice(0, 2)}-${other.ein.slice(2)}`]) {
      for (const version of ['2026-04-01', '2026-01-15']) {
        const res = await get(`/v1/nonprofit/${ein}`, { 'api-version': version }, key);
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ id: other.orgId, ein: other.ein, claimed: true });
      }
    }
  });

  it("answers an unknown EIN and a fund provider's EIN with 404, and a malformed one with 400", async () => {
    await addOrganization(t.db, { ein: '91-1111111', name: 'Some Fund', kind: 'fund_provider' });
    for (const ein of ['99-9999999', '911111111']) {
      const res = await get(`/v1/nonprofit/${ein}`, {}, key);
      expect(res.status).toBe(404);
    }
    expect((await get('/v1/nonprofit/12345', {}, key)).status).toBe(400);
  });

  it('accepts an access token too', async () => {
    expect((await get(`/v1/nonprofit/${staff.ein}`)).status).toBe(200);
  });
});

describe('versions', () => {
  it('default to 2026-04-01, echo the version, and refuse an unknown one with 400', async () => {
    expect((await get('/v1/grants')).headers.get('api-version')).toBe('2026-04-01');
    const unknown = await get('/v1/grants', { 'api-version': '2025-01-01' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toMatch(/Unknown Api-Version/);
  });
});

describe('OpenAPI', () => {
  it('serves an OpenAPI 3.1 document generated from the routes, per version', async () => {
    const res = await apiGet(server, 'production', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ openapi: '3.1.0', info: { version: '2026-04-01' } });
    const paths = res.body.paths as Record<string, Record<string, { parameters: { name: string }[]; operationId: string }>>;
    expect(Object.keys(paths)).toEqual(
      expect.arrayContaining([
        '/v1/donations',
        '/v1/donations/{id}',
        '/v1/grants',
        '/v1/grants/{id}',
        '/v1/nonprofit/{ein}',
        '/v1/donor_accounts',
        '/v1/authorization_tokens/verify',
      ]),
    );
    expect(paths['/v1/donations']!.get!.parameters.map((p) => p.name)).toContain('dafpay_tracking_id');
    const older = await apiGet(server, 'production', '/openapi.json', { headers: { 'api-version': '2026-01-15' } });
    const olderPaths = older.body.paths as typeof paths;
    expect(olderPaths['/v1/donations']!.get!.parameters.map((p) => p.name)).not.toContain('dafpay_tracking_id');
    // The donor-advised-fund APIs arrived in 2026-04-01.
    expect(Object.keys(olderPaths)).not.toContain('/v1/donor_accounts');
  });
});
