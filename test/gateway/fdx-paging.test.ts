import { beforeAll, describe, expect, it } from 'vitest';
import { createAccount, daysAgo, fdxClient, fdxGet, fdxToken, insertTransactions, isoDay, type TxInput } from '../helpers/fdx.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const { testDatabase: t, server, staff } = useOAuthServer();
let token: string;
let accountId: string;
let stored: string[];

const TOTAL = 5000;
/** The last 400 days up to today, computed at each request (a run may cross UTC midnight). */
const range = () => `startTime=${isoDay(daysAgo(400))}&endTime=${isoDay(new Date())}`;

beforeAll(async () => {
  token = await fdxToken(server, await fdxClient(server), staff);
  accountId = (await createAccount(t.db, staff, 'production')).id;
  // Transactions in runs of five sharing one timestamp, so pages also split ties (broken by id).
  const base = daysAgo(1).getTime();
  const inputs: TxInput[] = Array.from({ length: TOTAL }, (_, i) => ({
    at: new Date(base - Math.floor(i / 5) * 3_600_000),
    cents: 100 + i,
    direction: i % 3 === 0 ? 'DEBIT' : 'CREDIT',
    postedAfterMs: i < 20 ? null : 60_000,
  }));
  stored = await insertTransactions(t.db, accountId, inputs);
});

type Page = {
  transactions: { transactionId: string; transactionTimestamp: string }[];
  page: { nextPageKey?: string; totalElements: number };
};

describe('FDX paging', () => {
  it('walks a 5,000-transaction account with limit=10 and pageKey, seeing each transaction exactly once, even while new ones arrive', async () => {
    const seen: string[] = [];
    let key: string | undefined;
    let pages = 0;
    let previous = '9999';
    let added: string[] = [];
    do {
      const res = await fdxGet(server, `/accounts/${accountId}/transactions?limit=10&${range()}${key ? `&pageKey=${key}` : ''}`, token);
      expect(res.status).toBe(200);
      const body = res.body as unknown as Page;
      expect(body.transactions.length).toBeLessThanOrEqual(10);
      for (const tx of body.transactions) {
        // Newest first: each page continues where the previous one stopped.
        expect(tx.transactionTimestamp <= previous).toBe(true);
        previous = tx.transactionTimestamp;
        seen.push(tx.transactionId);
      }
      if (pages === 100) {
        // Rows added mid-walk land before the cursor: the walk neither repeats nor skips.
        added = await insertTransactions(t.db, accountId, [
          { at: new Date(), cents: 1 },
          { at: daysAgo(0), cents: 2 },
        ]);
      }
      expect(body.page.totalElements).toBe(pages <= 100 ? TOTAL : TOTAL + 2);
      key = body.page.nextPageKey;
      pages += 1;
    } while (key);
    expect(pages).toBe(TOTAL / 10);
    expect(seen).toHaveLength(TOTAL);
    expect(new Set(seen).size).toBe(TOTAL);
    expect([...seen].sort()).toEqual([...stored].sort());
    expect(seen.some((id) => added.includes(id))).toBe(false);
  });

  it('gives every page of a limit=100 walk exactly 100 rows until the last, which has no nextPageKey', async () => {
    let key: string | undefined;
    const sizes: number[] = [];
    do {
      const body = (await fdxGet(server, `/accounts/${accountId}/transactions?limit=100&${range()}${key ? `&pageKey=${key}` : ''}`, token))
        .body as unknown as Page;
      sizes.push(body.transactions.length);
      key = body.page.nextPageKey;
      if (!key) expect(body.page).not.toHaveProperty('nextPageKey');
    } while (key);
    expect(sizes.slice(0, -1).every((n) => n === 100)).toBe(true);
    // Every row of the account (the walk above adds two mid-way when it runs first).
    const rows = await t.db
      .selectFrom('deposit_transactions')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    expect(Number(rows.n)).toBeGreaterThanOrEqual(TOTAL);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(Number(rows.n));
  });

  it('clamps limit to 10–100 instead of refusing it', async () => {
    for (const [limit, size] of [
      ['1', 10],
      ['0', 10],
      ['-4', 10],
      ['10', 10],
      ['57', 57],
      ['100', 100],
      ['101', 100],
      ['100000', 100],
    ] as const) {
      const body = (await fdxGet(server, `/accounts/${accountId}/transactions?limit=${limit}&${range()}`, token)).body as unknown as Page;
      expect(body.transactions.length, `limit=${limit}`).toBe(size);
    }
  });

  it('refuses a pageKey it did not issue for this list with 400 (FDX code 400), never a 500', async () => {
    const otherAccount = (await createAccount(t.db, staff, 'production')).id;
    const [foreign] = await insertTransactions(t.db, otherAccount, [{ at: daysAgo(2), cents: 5 }]);
    for (const key of ['abc', '12345', '00000000-0000-4000-8000-000000000000', foreign!, "'; drop table deposit_transactions; --"]) {
      const res = await fdxGet(server, `/accounts/${accountId}/transactions?pageKey=${encodeURIComponent(key)}&${range()}`, token);
      expect(res.status, key).toBe(400);
      expect(res.body).toMatchObject({
        type: 'about:blank',
        title: 'Bad Request',
        status: 400,
        code: 400,
        detail: expect.stringMatching(/pageKey/),
      });
    }
  });
});
