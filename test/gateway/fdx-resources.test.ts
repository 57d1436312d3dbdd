import { beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { apiGet } from '../helpers/gateway.js';
import { createAccount, daysAgo, fdxClient, fdxGet, fdxToken, insertTransactions, isoDay, seedBank } from '../helpers/fdx.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const { testDatabase: t, server, staff } = useOAuthServer();
let bank: { account_ids: string[]; statement_ids: string[] };
let token: string;

beforeAll(async () => {
  await t.db
    .updateTable('organizations')
    .set({ address_line1: '100 Harvest Way', city: 'Springfield', region: 'IL', postal_code: '62701' })
    .where('id', '=', staff.orgId)
    .execute();
  bank = await seedBank(t.db, staff, 'production', { accounts: 3, transactionsPerAccount: 400 });
  token = await fdxToken(server, await fdxClient(server), staff);
});

const get = (path: string, bearer = token) => fdxGet(server, path, bearer);
/** The last two years up to today, computed when a test asks (a run may cross UTC midnight). */
const lastTwoYears = () => `startTime=${isoDay(daysAgo(729))}&endTime=${isoDay(new Date())}`;

describe('FDX resources (fdxGet validates each against spec/openapi/fdx-v6.yaml)', () => {
  it('lists the accounts with organizationId, masked account numbers and page metadata', async () => {
    const res = await get('/accounts');
    expect(res.status).toBe(200);
    expect(res.body.organizationId).toBe(staff.orgId);
    // The seeded three, and any account another test of this file added first.
    const stored = await t.db
      .selectFrom('deposit_accounts')
      .select(['id', 'account_number'])
      .where('organization_id', '=', staff.orgId)
      .where('environment', '=', 'production')
      .execute();
    expect(stored.map((s) => s.id)).toEqual(expect.arrayContaining(bank.account_ids));
    expect(res.body.page).toEqual({ totalElements: stored.length });
    expect((res.body.accounts as unknown[]).length).toBe(stored.length);
    for (const account of res.body.accounts as Record<string, string>[]) {
      const row = stored.find((s) => s.id === account.accountId)!;
      expect(account).toMatchObject({
        accountCategory: 'DEPOSIT_ACCOUNT',
        accountType: 'CHECKING',
        status: 'OPEN',
        currency: { currencyCode: 'USD' },
        accountNumber: row.account_number,
      });
      expect(account.accountNumberDisplay).toBe(`...${row.account_number.slice(-4)}`);
      expect(account.accountOpenDate).toMatch(/^\d{4}-\d{2}-01$/);
    }
  });

  it('pages the account list: limit clamped to 10–100, nextPageKey absent on the last page', async () => {
    const many = await createStaff(t.db);
    await seedBank(t.db, many, 'production', { accounts: 12, transactionsPerAccount: 0 });
    const bearer = await fdxToken(server, await fdxClient(server), many);
    const first = await get('/accounts?limit=5', bearer); // clamped up to 10
    expect(first.status).toBe(200);
    expect((first.body.accounts as unknown[]).length).toBe(10);
    expect(first.body.page).toEqual({ totalElements: 12, nextPageKey: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const second = await get(`/accounts?limit=5&pageKey=${(first.body.page as { nextPageKey: string }).nextPageKey}`, bearer);
    expect(second.body.page).toEqual({ totalElements: 12 });
    const ids = [...(first.body.accounts as { accountId: string }[]), ...(second.body.accounts as { accountId: string }[])].map(
      (a) => a.accountId,
    );
    expect(new Set(ids).size).toBe(12);
    const all = await get('/accounts?limit=1000', bearer); // clamped down to 100
    expect((all.body.accounts as unknown[]).length).toBe(12);
    expect(all.body.page).toEqual({ totalElements: 12 });
    expect((await get('/accounts?limit=ten', bearer)).body).toMatchObject({ status: 400, code: 400 });
  });

  it('gives account details whose balances follow from the stored transactions', async () => {
    const account = await createAccount(t.db, staff, 'production', { openingBalance: 100_000 });
    await insertTransactions(t.db, account.id, [
      { at: daysAgo(10), cents: 25_050, direction: 'CREDIT' },
      { at: daysAgo(9), cents: 5_025, direction: 'DEBIT', type: 'CHECK', checkNumber: 1001 },
      { at: daysAgo(1), cents: 1_000, direction: 'DEBIT', postedAfterMs: null }, // pending: holds the available balance only
      { at: daysAgo(1), cents: 7_000, direction: 'CREDIT', postedAfterMs: null }, // a pending credit is not available yet
    ]);
    // The balances are as of the request: with the clock stopped, exactly this instant.
    const asOf = Date.now();
    vi.useFakeTimers({ toFake: ['Date'], now: asOf });
    onTestFinished(() => void vi.useRealTimers());
    const res = await get(`/accounts/${account.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      accountId: account.id,
      accountNumber: account.accountNumber,
      balanceType: 'ASSET',
      routingTransitNumber: '011000015',
      currentBalance: 1200.25,
      availableBalance: 1190.25,
    });
    expect(res.body.balanceAsOf).toBe(new Date(asOf).toISOString());
  });

  it('gives the account contact and customers: the organization, never a person', async () => {
    const id = bank.account_ids[0]!;
    const contact = await get(`/accounts/${id}/contact`);
    expect(contact.status).toBe(200);
    const address = { line1: '100 Harvest Way', city: 'Springfield', region: 'IL', postalCode: '62701', country: 'US' };
    expect(contact.body).toMatchObject({
      addresses: [address],
      holders: [
        {
          relationship: 'BUSINESS',
          type: 'BUSINESS',
          businessCustomer: { registeredId: `${staff.ein.slice(0, 2)}-${staff.ein.slice(2)}` },
        },
      ],
    });
    const customers = await get(`/accounts/${id}/customers`);
    expect(customers.status).toBe(200);
    expect(customers.body.customers).toEqual([
      expect.objectContaining({ customerId: staff.orgId, type: 'BUSINESS', addresses: [address] }),
    ]);
  });

  it('gives the current customer from the token alone: customerId is the organizationId', async () => {
    const res = await get('/customers/current');
    expect(res.status).toBe(200);
    const org = await t.db.selectFrom('organizations').select(['name']).where('id', '=', staff.orgId).executeTakeFirstOrThrow();
    expect(res.body).toEqual({
      customerId: staff.orgId,
      name: { company: org.name },
      taxId: `${staff.ein.slice(0, 2)}-${staff.ein.slice(2)}`,
      type: 'BUSINESS',
      addresses: [{ line1: '100 Harvest Way', city: 'Springfield', region: 'IL', postalCode: '62701', country: 'US' }],
      businessCustomer: { name: org.name, registeredId: `${staff.ein.slice(0, 2)}-${staff.ein.slice(2)}` },
    });
    expect(res.body.customerId).toBe((await get('/accounts')).body.organizationId);
  });

  it('lists the 24 monthly statements newest first, each with a download link', async () => {
    const id = bank.account_ids[1]!;
    const res = await get(`/accounts/${id}/statements?${lastTwoYears()}&limit=100`);
    expect(res.status).toBe(200);
    const statements = res.body.statements as {
      statementId: string;
      statementDate: string;
      status: string;
      links: { href: string }[];
      accountId: string;
    }[];
    expect(res.body.page).toEqual({ totalElements: 24 });
    expect(statements).toHaveLength(24);
    expect(statements.map((s) => s.statementDate)).toEqual([...statements.map((s) => s.statementDate)].sort().reverse());
    for (const s of statements) {
      expect(s).toMatchObject({
        accountId: id,
        status: 'AVAILABLE',
        links: [{ href: `/fdx/v6/accounts/${id}/statements/${s.statementId}` }],
      });
      expect(bank.statement_ids).toContain(s.statementId);
    }
    // The last statement covers the month before this one.
    const lastMonth = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 0));
    expect(statements[0]!.statementDate).toBe(`${isoDay(lastMonth)}T00:00:00.000Z`);
    const paged = await get(`/accounts/${id}/statements?${lastTwoYears()}`);
    expect((paged.body.statements as unknown[]).length).toBe(10);
    expect((paged.body.page as { nextPageKey?: string }).nextPageKey).toBe(statements[10]!.statementId);
  });

  it('lists transactions with the FDX fields: amount absolute, direction in debitCreditMemo, postedTimestamp only when posted', async () => {
    const id = bank.account_ids[2]!;
    const res = await get(`/accounts/${id}/transactions?${lastTwoYears()}&limit=100`);
    expect(res.status).toBe(200);
    const transactions = res.body.transactions as Record<string, unknown>[];
    expect(transactions).toHaveLength(100);
    const stored = await t.db.selectFrom('deposit_transactions').selectAll().where('account_id', '=', id).execute();
    for (const tx of transactions) {
      const row = stored.find((r) => r.id === tx.transactionId)!;
      expect(tx).toMatchObject({
        accountCategory: 'DEPOSIT_ACCOUNT',
        accountId: id,
        amount: Number(row.amount) / 100,
        debitCreditMemo: row.debit_credit,
        status: row.status,
        transactionType: row.transaction_type,
        description: row.description,
        reference: row.reference,
      });
      expect(tx.amount as number).toBeGreaterThan(0);
      expect(tx.transactionTimestamp).toBe(row.transaction_timestamp.toISOString());
      if (row.status === 'POSTED') expect(tx.postedTimestamp).toBe(row.posted_timestamp!.toISOString());
      else expect(tx).not.toHaveProperty('postedTimestamp');
    }
    const stamps = transactions.map((tx) => tx.transactionTimestamp as string);
    expect(stamps).toEqual([...stamps].sort().reverse());
  });

  it('describes the FDX operations in the generated /openapi.json, without an Api-Version parameter', async () => {
    const doc = (await apiGet(server, 'production', '/openapi.json')).body as {
      paths: Record<
        string,
        Record<
          string,
          {
            parameters: { name: string }[];
            responses: Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }>;
            'x-required-scope': string;
          }
        >
      >;
    };
    for (const path of [
      '/fdx/v6/accounts',
      '/fdx/v6/accounts/{id}',
      '/fdx/v6/accounts/{id}/contact',
      '/fdx/v6/accounts/{id}/customers',
      '/fdx/v6/accounts/{id}/statements',
      '/fdx/v6/accounts/{id}/statements/{statementId}',
      '/fdx/v6/accounts/{id}/transactions',
      '/fdx/v6/customers/current',
    ]) {
      const op = doc.paths[path]?.get;
      expect(op, path).toBeDefined();
      expect(op!.parameters.map((p) => p.name)).not.toContain('Api-Version');
      expect(op!['x-required-scope']).toMatch(/read:bank_accounts/);
    }
    expect(doc.paths['/fdx/v6/accounts/{id}/transactions']!.get!.parameters.map((p) => p.name).sort()).toEqual([
      'endTime',
      'id',
      'limit',
      'pageKey',
      'startTime',
    ]);
    expect(Object.keys(doc.paths['/fdx/v6/accounts/{id}/statements/{statementId}']!.get!.responses['200']!.content!)).toEqual([
      'application/pdf',
      'text/csv',
      'application/vnd.bai2',
    ]);
  });
});
