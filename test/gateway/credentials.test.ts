import { beforeAll, describe, expect, it } from 'vitest';
import { removeMember, setMemberRole } from '../../src/accounts/memberships.js';
import { revokeApiKey } from '../../src/api-keys/service.js';
import { revokeAuthorization } from '../../src/authorizations/authorizations.js';
import { hashId } from '../../src/db/provider-store.js';
import { basic, type Env } from '../helpers/flow.js';
import { accessToken, apiGet, apiKeyFor, seedData } from '../helpers/gateway.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const REDIRECT = 'https://app.example.org/callback';
const {
  testDatabase: t,
  server,
  staff,
  clients: { client },
} = useOAuthServer({
  clients: { client: { environment: 'production', redirectUris: [REDIRECT], scopes: ['read_only', 'read_write', 'openid'] } },
});

beforeAll(async () => {
  await seedData(t.db, staff, 'production', { donations: 5 });
  await seedData(t.db, staff, 'sandbox', { donations: 5 });
});

const token = (scope: string, login = staff.users.member, environment: Env = 'production', c = client) =>
  accessToken(server, c, { environment, redirectUri: REDIRECT, scope, login });

function expect401(res: Awaited<ReturnType<typeof apiGet>>, presented: boolean) {
  expect(res.status).toBe(401);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.headers.get('x-request-id')).toBeTruthy();
  expect(res.headers.get('www-authenticate')).toBe(presented ? 'Bearer realm="almoner", error="invalid_token"' : 'Bearer realm="almoner"');
  expect(res.body).toMatchObject({ type: 'about:blank', title: 'Unauthorized', status: 401, detail: expect.any(String) });
}

describe('gateway credentials', () => {
  it('refuses a call without credentials with 401 and WWW-Authenticate: Bearer', async () => {
    expect401(await apiGet(server, 'production', '/v1/donations'), false);
  });

  it('refuses malformed, unknown and client credentials with 401 invalid_token', async () => {
    expect401(await apiGet(server, 'production', '/v1/donations', { headers: { authorization: 'Bearer' } }), true);
    expect401(await apiGet(server, 'production', '/v1/donations', { bearer: 'x'.repeat(43) }), true);
    expect401(
      await apiGet(server, 'production', '/v1/donations', { headers: { authorization: basic(client.client_id, client.client_secret) } }),
      true,
    );
    expect401(await apiGet(server, 'production', '/v1/donations', { bearer: client.client_secret }), true);
    expect401(await apiGet(server, 'production', '/v1/donations', { bearer: 'alm_live_' + 'A'.repeat(32) }), true);
  });

  it('accepts an access token and an API key of the organization', async () => {
    const byToken = await apiGet(server, 'production', '/v1/donations', { bearer: await token('read_only') });
    expect(byToken.status).toBe(200);
    expect((byToken.body.results as unknown[]).length).toBe(5);
    const byKey = await apiGet(server, 'production', '/v1/donations', { bearer: await apiKeyFor(t.db, staff, 'production') });
    expect(byKey.status).toBe(200);
    expect(byKey.body.results).toEqual(byToken.body.results);
  });

  it('keeps environments apart: a sandbox key or token is unknown on the production host', async () => {
    const sandboxKey = await apiKeyFor(t.db, staff, 'sandbox');
    expect(sandboxKey).toMatch(/^alm_test_[A-Za-z0-9]{32}$/);
    expect((await apiGet(server, 'sandbox', '/v1/donations', { bearer: sandboxKey })).status).toBe(200);
    expect401(await apiGet(server, 'production', '/v1/donations', { bearer: sandboxKey }), true);
    const sandboxClient = await server.registerClient({ environment: 'sandbox', redirectUris: ['http://127.0.0.1:9999/callback'] });
    const sandboxToken = await accessToken(server, sandboxClient, {
      environment: 'sandbox',
      redirectUri: 'http://127.0.0.1:9999/callback',
      scope: 'read_only',
      login: staff.users.member,
    });
    expect((await apiGet(server, 'sandbox', '/v1/donations', { bearer: sandboxToken })).status).toBe(200);
    expect401(await apiGet(server, 'production', '/v1/donations', { bearer: sandboxToken }), true);
  });

  it("says when a key or token is the other environment's, and stays silent about unknown ones", async () => {
    const sandboxKey = await apiKeyFor(t.db, staff, 'sandbox');
    const productionKey = await apiKeyFor(t.db, staff, 'production');
    const atProduction = await apiGet(server, 'production', '/v1/donations', { bearer: sandboxKey });
    expect401(atProduction, true);
    expect(atProduction.body.detail).toBe(
      'This is a sandbox API key (alm_test_…) and this is the production API: send it to the sandbox API host, or use a production key (alm_live_…) here.',
    );
    const atSandbox = await apiGet(server, 'sandbox', '/v1/donations', { bearer: productionKey });
    expect401(atSandbox, true);
    expect(atSandbox.body.detail).toBe(
      'This is a production API key (alm_live_…) and this is the sandbox API: send it to the production API host, or use a sandbox key (alm_test_…) here.',
    );
    const sandboxClient = await server.registerClient({ environment: 'sandbox', redirectUris: ['http://127.0.0.1:9999/callback'] });
    const sandboxToken = await accessToken(server, sandboxClient, {
      environment: 'sandbox',
      redirectUri: 'http://127.0.0.1:9999/callback',
      scope: 'read_only',
      login: staff.users.member,
    });
    const tokenAtProduction = await apiGet(server, 'production', '/v1/donations', { bearer: sandboxToken });
    expect401(tokenAtProduction, true);
    expect(tokenAtProduction.body.detail).toBe(
      'This access token was issued by the sandbox authorization server and this is the production API: call the sandbox API host with it, or get a token from the production token endpoint.',
    );
    const productionToken = await token('read_only');
    const tokenAtSandbox = await apiGet(server, 'sandbox', '/v1/donations', { bearer: productionToken });
    expect(tokenAtSandbox.body.detail).toBe(
      'This access token was issued by the production authorization server and this is the sandbox API: call the production API host with it, or get a token from the sandbox token endpoint.',
    );
    // Unknown everywhere: the plain answers.
    expect((await apiGet(server, 'production', '/v1/donations', { bearer: 'alm_live_' + 'B'.repeat(32) })).body.detail).toBe(
      'The API key is unknown or revoked.',
    );
    expect((await apiGet(server, 'production', '/v1/donations', { bearer: 'y'.repeat(43) })).body.detail).toBe(
      'The access token is invalid, expired or revoked.',
    );
  });

  it('refuses a revoked API key at once', async () => {
    const key = await apiKeyFor(t.db, staff, 'production');
    const id = (await t.db.selectFrom('api_keys').select('id').orderBy('created_at', 'desc').executeTakeFirstOrThrow()).id;
    expect((await apiGet(server, 'production', '/v1/donations', { bearer: key })).status).toBe(200);
    await revokeApiKey(t.db, id);
    expect401(await apiGet(server, 'production', '/v1/donations', { bearer: key }), true);
  });

  it('answers a token without a read scope with 403 insufficient_scope', async () => {
    const res = await apiGet(server, 'production', '/v1/donations', { bearer: await token('openid') });
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="almoner", error="insufficient_scope", scope="read_only"');
    expect(res.body).toMatchObject({ type: 'about:blank', status: 403, error: 'insufficient_scope' });
  });

  it('narrows a user-subject token on the very next call after a role downgrade, and denies it after removal', async () => {
    const s = await createStaff(t.db);
    await seedData(t.db, s, 'production', { donations: 1 });
    const writeOnly = await token('read_write', s.users.member);
    expect((await apiGet(server, 'production', '/v1/donations', { bearer: writeOnly })).status).toBe(200);
    await setMemberRole(t.db, { org: s.ein, email: s.users.member.email, role: 'read_only' });
    const narrowed = await apiGet(server, 'production', '/v1/donations', { bearer: writeOnly });
    expect(narrowed.status).toBe(403);
    expect(narrowed.body.error).toBe('insufficient_scope');
    const readOnly = await token('read_only', s.users.member);
    expect((await apiGet(server, 'production', '/v1/donations', { bearer: readOnly })).status).toBe(200);
    await removeMember(t.db, { org: s.ein, email: s.users.member.email });
    expect401(await apiGet(server, 'production', '/v1/donations', { bearer: readOnly }), true);
  });

  it('refuses the token of a revoked authorization at once', async () => {
    const bearer = await token('read_only');
    expect((await apiGet(server, 'production', '/v1/donations', { bearer })).status).toBe(200);
    const { grant_id } = await t.db
      .selectFrom('oidc_models')
      .select('grant_id')
      .where('model', '=', 'AccessToken')
      .where('id', '=', hashId(bearer))
      .executeTakeFirstOrThrow();
    await revokeAuthorization(t.db, 'production', grant_id!, 'test');
    expect401(await apiGet(server, 'production', '/v1/donations', { bearer }), true);
  });

  it('refuses the token of a removed client', async () => {
    const doomed = await server.registerClient({ environment: 'production', redirectUris: [REDIRECT] });
    const bearer = await token('read_only', staff.users.member, 'production', doomed);
    expect((await apiGet(server, 'production', '/v1/donations', { bearer })).status).toBe(200);
    await t.db.deleteFrom('oauth_clients').where('client_id', '=', doomed.client_id).execute();
    expect401(await apiGet(server, 'production', '/v1/donations', { bearer }), true);
  });

  it('lets an organization-subject token outlive its approver', async () => {
    const s = await createStaff(t.db);
    await seedData(t.db, s, 'production', { donations: 2 });
    const orgClient = await server.registerClient({
      environment: 'production',
      redirectUris: [REDIRECT],
      scopes: ['read_only'],
      subjectType: 'organization',
    });
    const bearer = await token('read_only', s.users.admin, 'production', orgClient);
    await removeMember(t.db, { org: s.ein, email: s.users.admin.email });
    const res = await apiGet(server, 'production', '/v1/donations', { bearer });
    expect(res.status).toBe(200);
    expect((res.body.results as unknown[]).length).toBe(2);
  });
});
