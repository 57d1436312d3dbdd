import { beforeAll, describe, expect, it } from 'vitest';
import { removeMember, setMemberRole } from '../../src/accounts/memberships.js';
import { authorize, introspect, obtainTokens } from '../helpers/flow.js';
import { apiKeyFor, apiRequest, seedData, type ApiResponse } from '../helpers/gateway.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * A fund provider's staff connect applications the same way a nonprofit's do (docs/api.md,
 * "Donor-advised-fund APIs, events and webhooks": every /v1 operation accepts an access token of an
 * authorization for the organization), and the donor-advised-fund operations are the fund
 * provider's: the tokens of such authorizations read with read_only, write with read_write, and are
 * narrowed by the approver's current role on every call, exactly as a nonprofit's are.
 */

const REDIRECT = 'http://127.0.0.1:9999/callback';
const {
  testDatabase: t,
  server,
  staff: nonprofit,
  clients: { client },
} = useOAuthServer({
  // The FDX area is IP-restricted by default: loopback is inside this client's ranges.
  clients: {
    client: {
      environment: 'sandbox',
      name: 'Fund Ledger',
      redirectUris: [REDIRECT],
      scopes: ['read_only', 'read_write', 'openid', 'read:bank_accounts'],
      ipAllowList: ['127.0.0.0/8'],
    },
  },
});
let fund: Staff;
let otherFund: Staff;
let fundKey: string;

beforeAll(async () => {
  [fund, otherFund] = await Promise.all([createStaff(t.db, { kind: 'fund_provider' }), createStaff(t.db, { kind: 'fund_provider' })]);
  fundKey = await apiKeyFor(t.db, fund, 'sandbox');
  await seedData(t.db, nonprofit, 'sandbox', { donations: 3, connects: 1, grantsPerConnect: 2 });
});

/** The whole code flow for one of a fund provider's staff; the token response as issued. */
async function connect(login: { email: string; password: string }, scope: string) {
  const flow = await obtainTokens(server, {
    environment: 'sandbox',
    client,
    clientId: client.client_id,
    redirectUri: REDIRECT,
    scope,
    login,
  });
  expect(flow.tokens.status).toBe(200);
  return { accessToken: flow.tokens.body.access_token as string, scope: flow.tokens.body.scope as string, consentHtml: flow.consentHtml };
}

const call = (method: string, path: string, bearer: string, json?: unknown) =>
  apiRequest(server, 'sandbox', method, path, { bearer, json });

function expectInsufficientScope(res: ApiResponse, scope: string) {
  expect(res.status).toBe(403);
  expect(res.headers.get('www-authenticate')).toBe(`Bearer realm="almoner", error="insufficient_scope", scope="${scope}"`);
  expect(res.body).toMatchObject({ status: 403, error: 'insufficient_scope' });
}

describe("a fund provider's access tokens on the donor-advised-fund operations", () => {
  it('reads every DAF resource with read_only; a write is 403 insufficient_scope and changes nothing', async () => {
    // Data the provider made with its API key: the token sees the same organization's records.
    const account = (await call('POST', '/v1/donor_accounts', fundKey, { donor: { email: 'reader@example.org' } })).body.id as string;
    const token = (await call('POST', `/v1/donor_accounts/${account}/authorization_tokens`, fundKey, {})).body.id as string;
    const { accessToken, scope, consentHtml } = await connect(fund.users.member, 'read_only');
    expect(scope).toBe('read_only');
    expect(consentHtml).toContain('Fund provider');

    const listed = await call('GET', '/v1/donor_accounts', accessToken);
    expect(listed.status).toBe(200);
    expect((listed.body.results as { id: string }[]).map((r) => r.id)).toContain(account);
    expect((await call('GET', `/v1/donor_accounts/${account}`, accessToken)).body).toMatchObject({ id: account, status: 'pending' });
    expect((await call('GET', `/v1/donor_accounts/${account}/authorization_tokens`, accessToken)).status).toBe(200);
    expect((await call('GET', `/v1/authorization_tokens/${token}`, accessToken)).body).toMatchObject({ id: token, status: 'pending' });
    for (const path of ['/v1/giving_pools', '/v1/grant_requests', '/v1/event_subscriptions'])
      expect((await call('GET', path, accessToken)).status, path).toBe(200);
    const events = await call('GET', '/v1/events', accessToken);
    expect((events.body.results as { associated_object_id: string }[]).map((e) => e.associated_object_id)).toEqual(
      expect.arrayContaining([account, token]),
    );

    expectInsufficientScope(
      await call('POST', '/v1/donor_accounts', accessToken, { donor: { email: 'refused@example.org' } }),
      'read_write',
    );
    expectInsufficientScope(await call('POST', `/v1/authorization_tokens/${token}/revoke`, accessToken), 'read_write');
    expectInsufficientScope(
      await call('POST', '/v1/event_subscriptions', accessToken, { url: 'http://127.0.0.1:9/hook', category: 'donor_account.created' }),
      'read_write',
    );
    expect(await t.db.selectFrom('event_subscriptions').select('id').where('organization_id', '=', fund.orgId).execute()).toEqual([]);
    expect(await t.db.selectFrom('donor_accounts').select('id').where('email', '=', 'refused@example.org').execute()).toEqual([]);
    expect((await call('GET', `/v1/authorization_tokens/${token}`, fundKey)).body.status).toBe('pending');
  });

  it('writes with read_write: creates, changes and verifies donor accounts and subscribes to events, as the API key does', async () => {
    const { accessToken, scope } = await connect(fund.users.member, 'read_only read_write');
    expect(scope).toBe('read_only read_write');
    const created = await call('POST', '/v1/donor_accounts', accessToken, {
      donor: { email: 'writer@example.org', first_name: 'Ada' },
      external_id: 'D-1',
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect((await call('PATCH', `/v1/donor_accounts/${id}`, accessToken, { donor: { last_name: 'Lovelace' } })).body).toMatchObject({
      donor: { first_name: 'Ada', last_name: 'Lovelace' },
    });
    const issued = await call('POST', `/v1/donor_accounts/${id}/authorization_tokens`, accessToken, { expires_in: 3600 });
    expect(issued.status).toBe(201);
    const verified = await call('POST', '/v1/authorization_tokens/verify', accessToken, { code: issued.body.code });
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ id, status: 'approved', approval: { approved_by: 'system:authorization_token' } });
    expect((await call('POST', `/v1/donor_accounts/${id}/disable`, accessToken)).body).toMatchObject({ disabled: true });
    expect((await call('POST', `/v1/donor_accounts/${id}/enable`, accessToken)).body).toMatchObject({ disabled: false });
    const subscription = await call('POST', '/v1/event_subscriptions', accessToken, {
      url: 'http://127.0.0.1:9/hook',
      category: 'donor_account.updated',
    });
    expect(subscription.status).toBe(201);
    // The same organization's records, whichever credential wrote them.
    expect((await call('GET', `/v1/donor_accounts/${id}`, fundKey)).body).toMatchObject({ id, status: 'approved', disabled: false });
    const stored = await t.db.selectFrom('donor_accounts').select('fund_provider_id').where('id', '=', id).executeTakeFirstOrThrow();
    expect(stored.fund_provider_id).toBe(fund.orgId);
  });

  it("is narrowed by the approver's role as for nonprofits: a read-only member grants read_only, a downgrade stops writes on the next call, leaving stops the token", async () => {
    const viewer = await connect(fund.users.read_only, 'read_only read_write');
    expect(viewer.scope).toBe('read_only');
    expect(viewer.consentHtml).toContain('which your role (Read-only) does not allow you to grant');
    expect((await call('GET', '/v1/donor_accounts', viewer.accessToken)).status).toBe(200);
    expectInsufficientScope(
      await call('POST', '/v1/donor_accounts', viewer.accessToken, { donor: { email: 'viewer@example.org' } }),
      'read_write',
    );

    const staff = await createStaff(t.db, { kind: 'fund_provider' });
    const writer = await connect(staff.users.member, 'read_only read_write');
    expect((await call('POST', '/v1/donor_accounts', writer.accessToken, { donor: { email: 'before@example.org' } })).status).toBe(201);
    await setMemberRole(t.db, { org: staff.ein, email: staff.users.member.email, role: 'read_only' });
    expectInsufficientScope(
      await call('POST', '/v1/donor_accounts', writer.accessToken, { donor: { email: 'after@example.org' } }),
      'read_write',
    );
    expect((await call('GET', '/v1/donor_accounts', writer.accessToken)).status).toBe(200);
    expect((await introspect(server, 'sandbox', client, writer.accessToken)).body).toMatchObject({ active: true, scope: 'read_only' });
    await removeMember(t.db, { org: staff.ein, email: staff.users.member.email });
    expect((await call('GET', '/v1/donor_accounts', writer.accessToken)).status).toBe(401);
  });

  it("keeps organizations apart: another provider's token finds none of these records, a nonprofit's token is 403", async () => {
    const id = (await call('POST', '/v1/donor_accounts', fundKey, { donor: { email: 'mine@example.org' } })).body.id as string;
    const theirs = await connect(otherFund.users.owner, 'read_only read_write');
    expect((await call('GET', `/v1/donor_accounts/${id}`, theirs.accessToken)).status).toBe(404);
    expect((await call('GET', '/v1/donor_accounts', theirs.accessToken)).body.results).toEqual([]);
    const nonprofitToken = await connect(nonprofit.users.member, 'read_only read_write');
    const refused = await call('GET', '/v1/donor_accounts', nonprofitToken.accessToken);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/donor-advised-fund providers/);
  });
});

describe("the nonprofit operations with a fund provider's token", () => {
  it("answer as for the fund provider's API key: no donations or grants of its own, and the nonprofit directory", async () => {
    const { accessToken } = await connect(fund.users.member, 'read_only');
    for (const path of ['/v1/donations', '/v1/grants']) {
      const [byToken, byKey] = [await call('GET', path, accessToken), await call('GET', path, fundKey)];
      expect(byToken.status, path).toBe(200);
      expect(byToken.body, path).toEqual(byKey.body);
    }
    expect((await call('GET', '/v1/donations', accessToken)).body.results).toEqual([]);
    expect((await call('GET', `/v1/nonprofit/${nonprofit.ein}`, accessToken)).status).toBe(200);
    expect((await call('GET', `/v1/nonprofit/${fund.ein}`, accessToken)).status).toBe(404);
  });

  it('holds no bank data: the FDX scopes are not available on consent, and the FDX API refuses the token', async () => {
    const { accessToken, scope, consentHtml } = await connect(fund.users.admin, 'read_only read:bank_accounts');
    expect(scope).toBe('read_only');
    expect(consentHtml).toContain('Not available');
    expect(consentHtml).toContain('bank-account access is for nonprofits');
    const fdx = await call('GET', '/fdx/v6/accounts', accessToken);
    expectInsufficientScope(fdx, 'read_only read:bank_accounts');
    expect(fdx.body).not.toHaveProperty('code');

    // Asked for bank data alone, there is nothing to approve: the screen says why, and offers Deny only.
    const alone = await authorize(server, {
      environment: 'sandbox',
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'read:bank_accounts',
      login: fund.users.admin,
    });
    expect(alone.consentHtml).toContain('A fund provider has no data for read:bank_accounts');
    expect(alone.consentHtml).not.toContain('>Approve<');
    expect(alone.callback.searchParams.get('error')).toBe('access_denied');
  });
});
