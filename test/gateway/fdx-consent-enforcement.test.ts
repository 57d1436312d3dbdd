import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { revokeFdxConsent } from '../../src/authorizations/fdx-consents.js';
import type { ApiResponse } from '../helpers/gateway.js';
import {
  createAccount,
  createStatement,
  daysAgo,
  fdxClient,
  fdxDownload,
  fdxGet,
  fdxToken,
  insertTransactions,
  isoDay,
  seedBank,
} from '../helpers/fdx.js';
import { ALL_ACCOUNT_CLUSTERS, consentedToken } from '../helpers/fdx-consent.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/** Every FDX call of a token whose authorization has a consent is held to it (docs/api.md, "FDX bank-data API", Consents). */
const { testDatabase: t, server, staff } = useOAuthServer();
let bank: { account_ids: string[]; statement_ids: string[] };

beforeAll(async () => {
  bank = await seedBank(t.db, staff, 'production', { accounts: 3, transactionsPerAccount: 5 });
});

const call = (path: string, token: string) => fdxGet(server, path, token);
const everything = {
  resources: [
    { resourceType: 'ACCOUNT', dataClusters: ALL_ACCOUNT_CLUSTERS },
    { resourceType: 'CUSTOMER', dataClusters: ['CUSTOMER_CONTACT'] },
  ],
};
const ids = (res: ApiResponse, list: string, key: string) => (res.body[list] as Record<string, string>[]).map((item) => item[key]);

function expectInvalidToken(res: ApiResponse) {
  expect(res.status).toBe(401);
  expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  expect(res.body).not.toHaveProperty('code');
}

describe('FDX calls held to their consent', () => {
  it('show only the chosen accounts, counted alone; every other account is 701 as if absent', async () => {
    const [chosen, other] = bank.account_ids as [string, string];
    const { token } = await consentedToken(t.db, server, staff, everything, [chosen]);
    const list = await call('/accounts', token);
    expect(ids(list, 'accounts', 'accountId')).toEqual([chosen]);
    expect(list.body.page).toEqual({ totalElements: 1 });
    const statement = bank.statement_ids[24]!; // the second account's first statement
    for (const path of [
      `/accounts/${other}`,
      `/accounts/${other}/transactions`,
      `/accounts/${other}/statements`,
      `/accounts/${other}/contact`,
      `/accounts/${other}/customers`,
      `/accounts/${other}/statements/${statement}`,
    ]) {
      const res = await call(path, token);
      expect(res.body, path).toMatchObject({ status: 404, code: 701, message: 'Account not found' });
    }
    for (const path of [
      `/accounts/${chosen}`,
      `/accounts/${chosen}/transactions`,
      `/accounts/${chosen}/statements`,
      `/accounts/${chosen}/contact`,
      `/accounts/${chosen}/customers`,
      '/customers/current',
    ]) {
      expect((await call(path, token)).status, path).toBe(200);
    }
  });

  it('answer an operation whose data cluster was not consented with 403 and FDX code 602', async () => {
    const [chosen] = bank.account_ids as [string];
    const { token } = await consentedToken(
      t.db,
      server,
      staff,
      { resources: [{ resourceType: 'ACCOUNT', dataClusters: ['ACCOUNT_BASIC'] }] },
      [chosen],
    );
    expect(ids(await call('/accounts', token), 'accounts', 'accountId')).toEqual([chosen]);
    const refused = [
      `/accounts/${chosen}`,
      `/accounts/${chosen}/transactions`,
      `/accounts/${chosen}/statements`,
      `/accounts/${chosen}/contact`,
      `/accounts/${chosen}/customers`,
      '/customers/current',
    ];
    for (const path of refused) {
      const res = await call(path, token);
      expect(res.headers.get('content-type'), path).toMatch(/^application\/problem\+json/);
      expect(res.body, path).toEqual({
        type: 'about:blank',
        title: 'Forbidden',
        status: 403,
        detail: expect.stringMatching(/consent of this authorization does not include/),
        code: 602,
        message: 'Customer not authorized',
      });
    }
    const file = await fdxDownload(server, `/accounts/${chosen}/statements/${bank.statement_ids[0]}`, token);
    expect(file.status).toBe(403);
    expect(JSON.parse(file.text)).toMatchObject({ code: 602, detail: expect.stringMatching(/STATEMENTS/) });
    // A cluster is judged before the account: an unchosen account on a refused route is the same 403.
    expect((await call(`/accounts/${bank.account_ids[1]}/transactions`, token)).body).toMatchObject({ status: 403, code: 602 });
  });

  it('serve only the customer routes to a CUSTOMER-only consent', async () => {
    const { token } = await consentedToken(
      t.db,
      server,
      staff,
      { resources: [{ resourceType: 'CUSTOMER', dataClusters: ['CUSTOMER_CONTACT'] }] },
      [],
    );
    expect((await call('/customers/current', token)).body.customerId).toBe(staff.orgId);
    expect((await call('/accounts', token)).body).toMatchObject({ status: 403, code: 602 });
    expect((await call(`/accounts/${bank.account_ids[0]}/contact`, token)).body).toMatchObject({ status: 404, code: 701 });
  });

  it('clip transactions and statements to the lookback: an earlier startTime is clipped to now less lookbackPeriod days', async () => {
    const account = await createAccount(t.db, staff, 'production');
    const now = Date.now();
    const boundary = now - 30 * 86_400_000;
    const [before, after, recent] = await insertTransactions(t.db, account.id, [
      { at: new Date(boundary - 60_000), cents: 100 },
      { at: new Date(boundary + 60_000), cents: 200 },
      { at: new Date(now - 86_400_000), cents: 300 },
    ]);
    const oldStatement = await createStatement(t.db, account.id, isoDay(daysAgo(45)), isoDay(daysAgo(31)));
    const newStatement = await createStatement(t.db, account.id, isoDay(daysAgo(30)), isoDay(daysAgo(2)));
    const { token } = await consentedToken(
      t.db,
      server,
      staff,
      { lookbackPeriod: 30, resources: [{ resourceType: 'ACCOUNT', dataClusters: ALL_ACCOUNT_CLUSTERS }] },
      [account.id],
    );
    const range = `startTime=${isoDay(daysAgo(90))}&endTime=${isoDay(new Date())}`;
    const transactions = await call(`/accounts/${account.id}/transactions?${range}`, token);
    expect(ids(transactions, 'transactions', 'transactionId')).toEqual([recent, after]);
    expect(transactions.body.page).toEqual({ totalElements: 2 });
    expect(ids(transactions, 'transactions', 'transactionId')).not.toContain(before);
    const statements = await call(`/accounts/${account.id}/statements?${range}`, token);
    expect(ids(statements, 'statements', 'statementId')).toEqual([newStatement]);
    expect((await call(`/accounts/${account.id}/statements/${oldStatement}`, token)).body).toMatchObject({ status: 404, code: 1104 });
    expect((await fdxDownload(server, `/accounts/${account.id}/statements/${newStatement}`, token, 'text/csv')).status).toBe(200);
    // A window wholly before the lookback is simply empty.
    const old = await call(`/accounts/${account.id}/transactions?startTime=${isoDay(daysAgo(80))}&endTime=${isoDay(daysAgo(40))}`, token);
    expect(old.body).toEqual({ page: { totalElements: 0 }, transactions: [] });
  });

  it('end the token at its next call once the consent is revoked, by the service or marked on the row alone', async () => {
    const first = await consentedToken(t.db, server, staff, everything, [bank.account_ids[0]!]);
    expect((await call('/accounts', first.token)).status).toBe(200);
    await sql`update fdx_consents set status = 'REVOKED', revoked_at = now(), revocation_reason = 'USER_ACTION', revocation_initiator = 'INDIVIDUAL' where id = ${first.consent.id}`.execute(
      t.db,
    );
    expectInvalidToken(await call('/accounts', first.token));
    const second = await consentedToken(t.db, server, staff, everything, [bank.account_ids[0]!]);
    expect(
      await revokeFdxConsent(t.db, {
        environment: 'production',
        consentId: second.consent.id,
        owner: { clientId: second.client.client_id },
        reason: 'USER_ACTION',
        initiator: 'DATA_PROVIDER',
      }),
    ).toBe('revoked');
    expectInvalidToken(await call('/customers/current', second.token));
  });

  it('end the token once the consent has expired, before any sweep', async () => {
    const { token, consent } = await consentedToken(t.db, server, staff, everything, [bank.account_ids[0]!]);
    expect((await call('/accounts', token)).status).toBe(200);
    await sql`update fdx_consents set created_at = now() - interval '31 days', expires_at = now() - interval '1 second' where id = ${consent.id}`.execute(
      t.db,
    );
    expectInvalidToken(await call('/accounts', token));
  });

  it('leave a token without a consent exactly as before: every account, every operation', async () => {
    const token = await fdxToken(server, await fdxClient(server), staff);
    const list = await call('/accounts', token);
    const all = await t.db
      .selectFrom('deposit_accounts')
      .select('id')
      .where('organization_id', '=', staff.orgId)
      .where('environment', '=', 'production')
      .execute();
    expect([...ids(list, 'accounts', 'accountId')].sort()).toEqual(all.map((a) => a.id).sort());
    expect(all.length).toBeGreaterThanOrEqual(3);
    for (const path of [
      `/accounts/${bank.account_ids[1]}`,
      `/accounts/${bank.account_ids[1]}/transactions`,
      `/accounts/${bank.account_ids[1]}/statements`,
      '/customers/current',
    ]) {
      expect((await call(path, token)).status, path).toBe(200);
    }
  });
});
