import { beforeAll, describe, expect, it } from 'vitest';
import { accessToken, apiGet, apiKeyFor, seedData } from '../helpers/gateway.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const REDIRECT = 'https://app.example.org/callback';
// Donations made IP-restricted for these tests; one server trusts loopback as its proxy.
const {
  testDatabase: t,
  server: direct,
  staff,
  peers: { proxied },
} = useOAuthServer({
  config: { ip_restricted_areas: ['donations', 'fdx'] },
  peers: { proxied: { trusted_proxies: ['127.0.0.1/32'] } },
});

beforeAll(async () => {
  await seedData(t.db, staff, 'production', { donations: 3 });
});

async function tokenFor(ranges: string[]) {
  const client = await direct.registerClient({
    environment: 'production',
    redirectUris: [REDIRECT],
    scopes: ['read_only'],
    ipAllowList: ranges,
  });
  return accessToken(direct, client, { environment: 'production', redirectUri: REDIRECT, scope: 'read_only', login: staff.users.member });
}

function expectOutside(res: Awaited<ReturnType<typeof apiGet>>) {
  expect(res.status).toBe(403);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(Object.keys(res.body).sort()).toEqual(['detail', 'status', 'title', 'type']);
  expect(res.body).toEqual({
    type: 'about:blank',
    title: 'Forbidden',
    status: 403,
    detail: expect.stringMatching(/outside the CIDR ranges/),
  });
}

describe('IP allow-lists on restricted APIs', () => {
  it("admits a caller inside the client's ranges", async () => {
    expect((await apiGet(direct, 'production', '/v1/donations', { bearer: await tokenFor(['127.0.0.0/8']) })).status).toBe(200);
  });

  it('gives a valid token from outside exactly the 403 body, and audits the denial', async () => {
    const res = await apiGet(direct, 'production', '/v1/donations', { bearer: await tokenFor(['10.0.0.0/8']) });
    expectOutside(res);
    // This request's denial (other tests of the file audit theirs too).
    const audit = await t.db
      .selectFrom('audit_events')
      .selectAll()
      .where('event', '=', 'gateway.ip_denied')
      .where('request_id', '=', res.headers.get('x-request-id')!)
      .execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ environment: 'production', organization_id: staff.orgId, ip: '127.0.0.1' });
  });

  it('checks the address before the token: an expired token or a revoked authorization from outside is still the 403', async () => {
    const bearer = await tokenFor(['10.0.0.0/8']);
    const row = await t.db
      .selectFrom('oidc_models')
      .select(['id', 'payload', 'grant_id'])
      .where('model', '=', 'AccessToken')
      .orderBy('expires_at', 'desc')
      .executeTakeFirstOrThrow();
    await t.db
      .updateTable('oidc_models')
      .set({ payload: JSON.stringify({ ...row.payload, exp: Math.floor(Date.now() / 1000) - 60 }) })
      .where('id', '=', row.id)
      .execute();
    expectOutside(await apiGet(direct, 'production', '/v1/donations', { bearer }));
    await t.db.updateTable('oauth_authorizations').set({ revoked_at: new Date() }).where('grant_id', '=', row.grant_id!).execute();
    expectOutside(await apiGet(direct, 'production', '/v1/donations', { bearer }));
    // From inside the ranges the same token is simply invalid.
    const inside = await apiGet(proxied, 'production', '/v1/donations', { bearer, headers: { 'x-forwarded-for': '10.1.2.3' } });
    expect(inside.status).toBe(401);
  });

  it('is not fooled by X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    const bearer = await tokenFor(['203.0.113.0/24']);
    expectOutside(await apiGet(direct, 'production', '/v1/donations', { bearer, headers: { 'x-forwarded-for': '203.0.113.7' } }));
  });

  it('believes X-Forwarded-For from a trusted proxy, IPv4 and IPv6 ranges alike', async () => {
    const v4 = await tokenFor(['203.0.113.0/24']);
    expect(
      (await apiGet(proxied, 'production', '/v1/donations', { bearer: v4, headers: { 'x-forwarded-for': '203.0.113.7' } })).status,
    ).toBe(200);
    expectOutside(await apiGet(proxied, 'production', '/v1/donations', { bearer: v4, headers: { 'x-forwarded-for': '198.51.100.7' } }));
    const v6 = await tokenFor(['2001:db8:aa::/48']);
    expect(
      (await apiGet(proxied, 'production', '/v1/donations', { bearer: v6, headers: { 'x-forwarded-for': '2001:db8:aa:1::42' } })).status,
    ).toBe(200);
    expectOutside(await apiGet(proxied, 'production', '/v1/donations', { bearer: v6, headers: { 'x-forwarded-for': '2001:db8:ab::1' } }));
  });

  it('denies a client with no ranges on a restricted API, and leaves unrestricted APIs alone', async () => {
    const bearer = await tokenFor([]);
    expectOutside(await apiGet(direct, 'production', '/v1/donations', { bearer }));
    expect((await apiGet(direct, 'production', '/v1/grants', { bearer })).status).toBe(200);
  });

  it('does not apply to API keys, which belong to the organization rather than a client', async () => {
    expect((await apiGet(direct, 'production', '/v1/donations', { bearer: await apiKeyFor(t.db, staff, 'production') })).status).toBe(200);
  });
});
