import { beforeAll, describe, expect, it } from 'vitest';
import { setMemberRole } from '../../src/accounts/memberships.js';
import { apiGet, apiKeyFor, type ApiResponse } from '../helpers/gateway.js';
import { fdxClient, fdxDownload, fdxGet, fdxToken, seedBank } from '../helpers/fdx.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

// The default configuration: the FDX area is IP-restricted.
const {
  testDatabase: t,
  server,
  allStaff: [ours, theirs],
} = useOAuthServer({ staff: 2 });
let ourBank: { account_ids: string[]; statement_ids: string[] };
let theirBank: { account_ids: string[]; statement_ids: string[] };
let ourSandboxAccount: string;
let token: string;
let client: { client_id: string; client_secret: string };

beforeAll(async () => {
  ourBank = await seedBank(t.db, ours, 'production', { accounts: 2, transactionsPerAccount: 30 });
  theirBank = await seedBank(t.db, theirs, 'production', { accounts: 1, transactionsPerAccount: 30 });
  ourSandboxAccount = (await seedBank(t.db, ours, 'sandbox', { accounts: 1, transactionsPerAccount: 5 })).account_ids[0]!;
  client = await fdxClient(server);
  token = await fdxToken(server, client, ours);
});

/** Every FDX operation, as (published path, concrete path) for one account and statement. */
function operations(accountId: string, statementId: string): [string, string][] {
  return [
    ['/accounts', '/accounts'],
    ['/accounts/{id}', `/accounts/${accountId}`],
    ['/accounts/{id}/contact', `/accounts/${accountId}/contact`],
    ['/accounts/{id}/customers', `/accounts/${accountId}/customers`],
    ['/accounts/{id}/statements', `/accounts/${accountId}/statements`],
    ['/accounts/{id}/statements/{statementId}', `/accounts/${accountId}/statements/${statementId}`],
    ['/accounts/{id}/transactions', `/accounts/${accountId}/transactions`],
    ['/customers/current', '/customers/current'],
  ];
}

async function call(path: string, bearer: string, headers: Record<string, string> = {}): Promise<ApiResponse> {
  return fdxGet(server, path, bearer, { headers });
}

function expectNoFdxCode(res: ApiResponse, status: number) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).not.toHaveProperty('code');
  expect(res.body).not.toHaveProperty('message');
}

describe('FDX access', () => {
  it('serves every operation to a read_only + read:bank_accounts token from inside the allow-list', async () => {
    for (const [, path] of operations(ourBank.account_ids[0]!, ourBank.statement_ids[0]!)) {
      const res = path.includes('/statements/') ? await fdxDownload(server, path, token) : await call(path, token);
      expect(res.status, path).toBe(200);
    }
  });

  it('accepts sync:connected_accounts as the FDX scope just as well', async () => {
    const sync = await fdxToken(server, client, ours, { scope: 'read_only sync:connected_accounts' });
    expect((await call('/accounts', sync)).status).toBe(200);
  });

  it('answers an address outside the allow-list with exactly the four-member 403 on every operation, even for an expired token', async () => {
    const outside = await fdxClient(server, 'production', { ipAllowList: ['10.0.0.0/8'] });
    const bearer = await fdxToken(server, outside, ours);
    for (const [, path] of operations(ourBank.account_ids[0]!, ourBank.statement_ids[0]!)) {
      const res = await call(path, bearer);
      expect(res.status, path).toBe(403);
      expect(res.body).toEqual({
        type: 'about:blank',
        title: 'Forbidden',
        status: 403,
        detail: expect.stringMatching(/outside the CIDR ranges/),
      });
      expect(Object.keys(res.body).sort()).toEqual(['detail', 'status', 'title', 'type']);
    }
    // The address is judged before the token: an expired token from outside is the same 403.
    const row = await t.db
      .selectFrom('oidc_models')
      .select(['id', 'payload'])
      .where('model', '=', 'AccessToken')
      .orderBy('expires_at', 'desc')
      .executeTakeFirstOrThrow();
    await t.db
      .updateTable('oidc_models')
      .set({ payload: JSON.stringify({ ...row.payload, exp: Math.floor(Date.now() / 1000) - 60 }) })
      .where('id', '=', row.id)
      .execute();
    expect((await call('/accounts', bearer)).body).toEqual({
      type: 'about:blank',
      title: 'Forbidden',
      status: 403,
      detail: expect.any(String),
    });
    // A client that registered no ranges cannot call the FDX API at all.
    const none = await fdxClient(server, 'production', { ipAllowList: [] });
    const res = await call('/accounts', await fdxToken(server, none, ours));
    expect(res.body).toEqual({ type: 'about:blank', title: 'Forbidden', status: 403, detail: expect.any(String) });
  });

  it('refuses a token without an FDX scope with 403 insufficient_scope and no FDX code', async () => {
    const plain = await fdxToken(server, client, ours, { scope: 'read_only' });
    for (const [, path] of operations(ourBank.account_ids[0]!, ourBank.statement_ids[0]!)) {
      const res = await call(path, plain);
      expectNoFdxCode(res, 403);
      expect(res.body).toMatchObject({
        error: 'insufficient_scope',
        detail: expect.stringMatching(/read_only and exactly one of read:bank_accounts or sync:connected_accounts/),
      });
      expect(res.headers.get('www-authenticate')).toMatch(/error="insufficient_scope"/);
    }
    // The token still works where read_only is enough.
    expect((await apiGet(server, 'production', '/v1/donations', { bearer: plain })).status).toBe(200);
  });

  it('refuses an FDX scope without read_only', async () => {
    const bare = await fdxToken(server, client, ours, { scope: 'read:bank_accounts' });
    expectNoFdxCode(await call('/accounts', bare), 403);
  });

  it('stops FDX access when the approving admin becomes a member (the role narrows the token)', async () => {
    const staff = await createStaff(t.db);
    await seedBank(t.db, staff, 'production', { accounts: 1, transactionsPerAccount: 1 });
    const bearer = await fdxToken(server, client, staff);
    expect((await call('/accounts', bearer)).status).toBe(200);
    await setMemberRole(t.db, { org: staff.ein, email: staff.users.admin.email, role: 'member' });
    expectNoFdxCode(await call('/accounts', bearer), 403);
  });

  it('takes access tokens only: an API key, no credential or a bad token is 401 without an FDX code', async () => {
    const key = await apiKeyFor(t.db, ours, 'production');
    const byKey = await call('/accounts', key);
    expectNoFdxCode(byKey, 401);
    expect(byKey.body.detail).toMatch(/access tokens only/);
    const none = await apiGet(server, 'production', '/fdx/v6/accounts');
    expectNoFdxCode(none, 401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="almoner"');
    expectNoFdxCode(await call('/customers/current', 'x'.repeat(43)), 401);
  });

  it('shows no data of another organization: lists hold only ours, their ids are 701 everywhere', async () => {
    const list = await call('/accounts', token);
    expect(list.body.organizationId).toBe(ours.orgId);
    expect((list.body.accounts as { accountId: string }[]).map((a) => a.accountId).sort()).toEqual([...ourBank.account_ids].sort());
    expect((await call('/customers/current', token)).body.customerId).toBe(ours.orgId);
    const [theirAccount, theirStatement] = [theirBank.account_ids[0]!, theirBank.statement_ids[0]!];
    for (const [, path] of operations(theirAccount, theirStatement).filter(([p]) => p.includes('{id}'))) {
      const res = await call(path, token);
      expect(res.status, path).toBe(404);
      expect(res.body).toMatchObject({ type: 'about:blank', title: 'Not Found', status: 404, code: 701, message: 'Account not found' });
      expect(JSON.stringify(res.body)).not.toContain(theirAccount);
    }
    // And the other way round: their token sees their organization only.
    const theirToken = await fdxToken(server, client, theirs);
    expect((await call(`/accounts/${ourBank.account_ids[0]}`, theirToken)).body.code).toBe(701);
    const theirs2 = await call('/accounts', theirToken);
    expect((theirs2.body.accounts as { accountId: string }[]).map((a) => a.accountId)).toEqual([theirAccount]);
  });

  it('keeps environments apart: the sandbox account of the same organization is 701 on the production host', async () => {
    const res = await call(`/accounts/${ourSandboxAccount}/transactions`, token);
    expect(res.body).toMatchObject({ status: 404, code: 701 });
    const sandboxClient = await fdxClient(server, 'sandbox');
    const sandboxToken = await fdxToken(server, sandboxClient, ours, { environment: 'sandbox' });
    const sandboxList = await fdxGet(server, '/accounts', sandboxToken, { environment: 'sandbox' });
    expect((sandboxList.body.accounts as { accountId: string }[]).map((a) => a.accountId)).toEqual([ourSandboxAccount]);
    // A production token is unknown on the sandbox host.
    expect((await fdxGet(server, '/accounts', token, { environment: 'sandbox' })).status).toBe(401);
  });

  it("refuses a statement of another account, even the caller's own, with 1104", async () => {
    const [first, second] = ourBank.account_ids as [string, string];
    const secondStatement = ourBank.statement_ids[24]!; // seedBank gives each account 24 statements
    for (const statementId of [secondStatement, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const res = await call(`/accounts/${first}/statements/${statementId}`, token);
      expect(res.body).toMatchObject({ status: 404, code: 1104, message: 'Statement id not found for account' });
    }
    expect((await fdxDownload(server, `/accounts/${second}/statements/${secondStatement}`, token)).status).toBe(200);
  });

  it('treats an id that cannot be an account (not a UUID) as 701, not a 400 or 500', async () => {
    for (const id of ['nope', '1', `${ourBank.account_ids[0]}x`])
      expect((await call(`/accounts/${id}`, token)).body).toMatchObject({ status: 404, code: 701 });
  });

  it('is versioned by its path: Api-Version is neither required nor echoed, even when unknown', async () => {
    const res = await call('/accounts', token, { 'api-version': '1999-01-01' });
    expect(res.status).toBe(200);
    expect(res.headers.get('api-version')).toBeNull();
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  it('gives problems raised outside the routes an FDX code too: unknown path, bad pageKey', async () => {
    const unknown = await call('/accounts/x/holdings/y', token);
    expect(unknown.body).toMatchObject({ status: 404, code: 404, message: 'Not Found' });
    const badKey = await call('/accounts?pageKey=abc', token);
    expect(badKey.body).toMatchObject({ status: 400, code: 400, detail: expect.stringMatching(/pageKey/) });
  });
});
