import { beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { historyBoundary } from '../../src/gateway/fdx/dates.js';
import { createAccount, createStatement, daysAgo, fdxClient, fdxGet, fdxToken, insertTransactions, isoDay } from '../helpers/fdx.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const { testDatabase: t, server, staff } = useOAuthServer();
let token: string;
let accountId: string;
const tx: Record<string, string> = {};
const statements: Record<string, string> = {};

const DAY = 86_400_000;
const at = (day: Date, ms = 12 * 3_600_000) => new Date(day.getTime() + ms);

beforeAll(async () => {
  token = await fdxToken(server, await fdxClient(server), staff);
  accountId = (await createAccount(t.db, staff, 'production')).id;
});

/** Transactions and statements dated relative to one instant, inserted once (on first use); resolves to that instant. */
let seeded: Promise<number> | undefined;
function seed(): Promise<number> {
  seeded ??= (async () => {
    const now = new Date();
    const day = (n: number) => daysAgo(n, now);
    const boundary = historyBoundary(day(0));
    const named: [string, Date][] = [
      ['now', new Date(now.getTime() - 60_000)],
      ['threeDaysAgo', at(day(3))],
      ['sevenDaysAgo', at(day(7), 0)], // the first instant of the default window
      ['eightDaysAgo', at(day(8))],
      ['dayStart', at(day(30), 0)],
      ['dayEnd', at(day(30), DAY - 1)],
      ['nextDay', at(day(29), 0)],
      ['previousDay', at(day(31), DAY - 1)],
      ['onBoundary', at(boundary, 0)],
      ['beforeBoundary', at(boundary, -1)],
      ['longAgo', at(day(800))],
    ];
    const ids = await insertTransactions(
      t.db,
      accountId,
      named.map(([, when]) => ({ at: when, cents: 100, postedAfterMs: null })),
    );
    named.forEach(([name], i) => (tx[name] = ids[i]!));
    // Statements are dated by their period's last day.
    for (const [name, end] of [
      ['recent', day(2)],
      ['lastMonthish', day(40)],
      ['old', day(800)],
    ] as const) {
      statements[name] = await createStatement(t.db, accountId, isoDay(new Date(end.getTime() - 27 * DAY)), isoDay(end));
    }
    return now.getTime();
  })();
  return seeded;
}

/**
 * Runs the calling test on the clock of the seeded data: the clock stands at the instant the
 * data was dated from, so the test, the in-process server and the data agree on "today" however
 * long the run takes, across UTC midnight too. Returns today and the 24-month boundary.
 */
async function onSeedDay(): Promise<{ today: Date; boundary: Date }> {
  const instant = await seed();
  vi.useFakeTimers({ toFake: ['Date'], now: instant });
  onTestFinished(() => void vi.useRealTimers());
  const today = daysAgo(0);
  return { today, boundary: historyBoundary(today) };
}

async function transactions(query: string): Promise<string[]> {
  const res = await fdxGet(server, `/accounts/${accountId}/transactions?limit=100${query}`, token);
  expect(res.status, query).toBe(200);
  const ids = (res.body.transactions as { transactionId: string }[]).map((x) => x.transactionId);
  return Object.entries(tx)
    .filter(([, id]) => ids.includes(id))
    .map(([name]) => name);
}

async function expect703(path: string) {
  const res = await fdxGet(server, path, token);
  expect(res.status, path).toBe(400);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({
    type: 'about:blank',
    title: 'Bad Request',
    status: 400,
    code: 703,
    message: 'Invalid date range',
    detail: expect.any(String),
  });
}

describe('FDX date rules (YYYY-MM-DD, inclusive, UTC days)', () => {
  it('defaults to the last 7 days when neither date is given', async () => {
    await onSeedDay();
    expect(await transactions('')).toEqual(['now', 'threeDaysAgo', 'sevenDaysAgo']);
  });

  it('includes both end days entirely: the first and last instant of the start and end dates', async () => {
    await onSeedDay();
    const day = isoDay(daysAgo(30));
    expect(await transactions(`&startTime=${day}&endTime=${day}`)).toEqual(['dayStart', 'dayEnd']);
    expect(await transactions(`&startTime=${isoDay(daysAgo(31))}&endTime=${isoDay(daysAgo(29))}`)).toEqual([
      'dayStart',
      'dayEnd',
      'nextDay',
      'previousDay',
    ]);
  });

  it('refuses one date without the other with 703', async () => {
    await onSeedDay();
    await expect703(`/accounts/${accountId}/transactions?startTime=${isoDay(daysAgo(5))}`);
    await expect703(`/accounts/${accountId}/transactions?endTime=${isoDay(daysAgo(5))}`);
    await expect703(`/accounts/${accountId}/statements?startTime=${isoDay(daysAgo(5))}`);
  });

  it('refuses a start after the end with 703', async () => {
    await onSeedDay();
    await expect703(`/accounts/${accountId}/transactions?startTime=${isoDay(daysAgo(2))}&endTime=${isoDay(daysAgo(3))}`);
    await expect703(`/accounts/${accountId}/statements?startTime=${isoDay(daysAgo(2))}&endTime=${isoDay(daysAgo(3))}`);
  });

  it('refuses a malformed or impossible date with 703', async () => {
    await onSeedDay();
    const good = isoDay(daysAgo(3));
    for (const bad of ['2026-1-05', '2026-02-30', '2025-13-01', '20260105', 'yesterday', '2026-01-05T00:00:00Z', '', '9'.repeat(500)]) {
      await expect703(`/accounts/${accountId}/transactions?startTime=${encodeURIComponent(bad)}&endTime=${good}`);
      await expect703(`/accounts/${accountId}/transactions?startTime=${good}&endTime=${encodeURIComponent(bad)}`);
    }
  });

  it('clamps a start older than 24 months to the boundary instead of refusing it', async () => {
    const { boundary } = await onSeedDay();
    const clamped = await transactions(`&startTime=2000-01-01&endTime=${isoDay(daysAgo(29))}`);
    expect(clamped).toContain('onBoundary');
    expect(clamped).not.toContain('beforeBoundary');
    expect(clamped).not.toContain('longAgo');
    expect(clamped).toEqual(await transactions(`&startTime=${isoDay(boundary)}&endTime=${isoDay(daysAgo(29))}`));
    // A range wholly before the boundary is valid, and empty.
    expect(await transactions('&startTime=2000-01-01&endTime=2000-12-31')).toEqual([]);
  });

  it('applies the same rules to statements, by statement date', async () => {
    const { today } = await onSeedDay();
    const list = async (query: string) => {
      const res = await fdxGet(server, `/accounts/${accountId}/statements${query}`, token);
      expect(res.status).toBe(200);
      const ids = (res.body.statements as { statementId: string }[]).map((s) => s.statementId);
      return Object.entries(statements)
        .filter(([, id]) => ids.includes(id))
        .map(([name]) => name);
    };
    expect(await list('')).toEqual(['recent']);
    expect(await list(`?startTime=${isoDay(daysAgo(40))}&endTime=${isoDay(daysAgo(40))}`)).toEqual(['lastMonthish']);
    expect(await list(`?startTime=2000-01-01&endTime=${isoDay(today)}`)).toEqual(['recent', 'lastMonthish']);
  });
});
