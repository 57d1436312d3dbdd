import { beforeAll, describe, expect, it } from 'vitest';
import {
  createAccount,
  createStatement,
  fdxClient,
  fdxDownload,
  fdxGet,
  fdxToken,
  insertTransactions,
  type TxInput,
} from '../helpers/fdx.js';
import { parseBai2 } from '../helpers/bai2.js';
import { parseCsv } from '../helpers/csv.js';
import { pdfPages } from '../helpers/pdf-text.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const { testDatabase: t, server, staff } = useOAuthServer();
let token: string;
let account: { id: string; accountNumber: string };
let statementId: string;
let path: string;

// A closed month: March 2025. Opening balance $1,000.00, a posting before it, tricky texts in it.
const month = (day: number, hour = 12) => new Date(Date.UTC(2025, 2, day, hour));
const inMonth: TxInput[] = [
  { at: month(3), cents: 125_000, direction: 'CREDIT', type: 'DIRECTDEPOSIT', description: 'Stripe payout ST-1', reference: 'DIR001' },
  {
    at: month(5),
    cents: 40_050,
    direction: 'DEBIT',
    type: 'CHECK',
    description: 'Check 1001 - Smith, "Jr." Farms',
    reference: 'CHK001',
    checkNumber: 1001,
  },
  { at: month(9), cents: 1_500, direction: 'DEBIT', type: 'FEE', description: 'Monthly service fee', reference: 'FEE001' },
  { at: month(12), cents: 99, direction: 'CREDIT', type: 'INTEREST', description: '=HYPERLINK("http://x")', reference: 'INT001' },
  {
    at: month(15),
    cents: 300_000,
    direction: 'CREDIT',
    type: 'TRANSFER',
    description: 'DAF grant / Fidelity\nCharitable',
    reference: 'TRF/001',
  },
  { at: month(20), cents: 250_000, direction: 'DEBIT', type: 'TRANSFER', description: 'Payroll - Gusto', reference: 'PAY001' },
  { at: month(31, 10), cents: 7_77, direction: 'DEBIT', type: 'POSDEBIT', description: '', reference: 'POS001' },
];
const outside: TxInput[] = [
  { at: new Date(Date.UTC(2025, 1, 20)), cents: 50_000, direction: 'CREDIT', description: 'Before the period' }, // moves the opening balance
  { at: month(31, 23), cents: 12_345, direction: 'CREDIT', description: 'Posted in April', postedAfterMs: 2 * 3_600_000 },
  { at: month(25), cents: 6_000, direction: 'DEBIT', description: 'Still pending', postedAfterMs: null },
];
const OPENING = 100_000 + 50_000;
const CREDITS = 125_000 + 99 + 300_000;
const DEBITS = 40_050 + 1_500 + 250_000 + 777;
const CLOSING = OPENING + CREDITS - DEBITS;

beforeAll(async () => {
  token = await fdxToken(server, await fdxClient(server), staff);
  account = await createAccount(t.db, staff, 'production', { openingBalance: 100_000, accountNumber: '4455667788' });
  await insertTransactions(t.db, account.id, [...inMonth, ...outside]);
  statementId = await createStatement(t.db, account.id, '2025-03-01', '2025-03-31');
  path = `/accounts/${account.id}/statements/${statementId}`;
});

/** The period's posted transactions as stored, in posting order. */
async function storedLines() {
  return t.db
    .selectFrom('deposit_transactions')
    .selectAll()
    .where('account_id', '=', account.id)
    .where('status', '=', 'POSTED')
    .where('posted_timestamp', '>=', new Date('2025-03-01T00:00:00Z'))
    .where('posted_timestamp', '<', new Date('2025-04-01T00:00:00Z'))
    .orderBy('posted_timestamp')
    .orderBy('id')
    .execute();
}

describe('FDX statement files', () => {
  it('serves a PDF by default (no Accept, */*, application/*) that a PDF reader opens, with account, period, balances and every transaction', async () => {
    for (const accept of [undefined, '*/*', 'application/*', 'application/pdf']) {
      const res = await fdxDownload(server, path, token, accept);
      expect(res.status, String(accept)).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/pdf');
      expect(res.headers.get('content-disposition')).toBe('attachment; filename="statement-2025-03-7788.pdf"');
      expect(res.headers.get('transfer-encoding')).toBe('chunked'); // streamed, not buffered
      expect(res.bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    }
    const { pages, info } = await pdfPages((await fdxDownload(server, path, token)).bytes);
    const text = pages.join('\n');
    expect(info.Title).toBe('Statement 2025-03-01 to 2025-03-31');
    expect(text).toContain('4455667788');
    expect(text).toContain('2025-03-01 to 2025-03-31');
    expect(text).toMatch(/Opening balance\s+\$1,500\.00/);
    expect(text).toMatch(/Closing balance\s+\$2,827\.72/);
    expect(CLOSING).toBe(282_772);
    expect(text).toContain('DAF grant / Fidelity Charitable');
    for (const line of ['Stripe payout ST-1', 'Monthly service fee', 'Payroll - Gusto', '1,250.00', '400.50', '7.77'])
      expect(text).toContain(line);
    expect(text).not.toContain('Posted in April');
    expect(text).not.toContain('Still pending');
  });

  it('paginates a long statement, repeating the table header on every page', async () => {
    const big = await createAccount(t.db, staff, 'production');
    await insertTransactions(
      t.db,
      big.id,
      Array.from({ length: 300 }, (_, i) => ({
        at: new Date(Date.UTC(2025, 5, 1 + (i % 28), 8, i % 60)),
        cents: 1000 + i,
        description: `Deposit number ${i}`,
      })),
    );
    const id = await createStatement(t.db, big.id, '2025-06-01', '2025-06-30');
    const { pages } = await pdfPages((await fdxDownload(server, `/accounts/${big.id}/statements/${id}`, token)).bytes);
    expect(pages.length).toBeGreaterThan(4);
    for (const page of pages) expect(page).toMatch(/Posted\s+Description\s+Reference\s+Debit\s+Credit\s+Balance/);
    for (let i = 0; i < 300; i += 1) expect(pages.join('\n')).toContain(`Deposit number ${i} `);
  });

  it('serves CSV: a header row, then one RFC 4180 line per posted transaction of the period, as stored', async () => {
    const res = await fdxDownload(server, path, token, 'text/csv');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="statement-2025-03-7788.csv"');
    expect(res.text.endsWith('\r\n')).toBe(true);
    const [header, ...rows] = parseCsv(res.text);
    expect(header).toEqual([
      'transactionId',
      'postedTimestamp',
      'transactionTimestamp',
      'description',
      'reference',
      'transactionType',
      'debitCreditMemo',
      'amount',
      'balance',
    ]);
    const stored = await storedLines();
    expect(rows).toHaveLength(stored.length);
    expect(rows).toHaveLength(inMonth.length);
    let balance = OPENING;
    rows.forEach((row, i) => {
      const s = stored[i]!;
      balance += s.debit_credit === 'CREDIT' ? Number(s.amount) : -Number(s.amount);
      // Text a spreadsheet would run as a formula is prefixed with an apostrophe.
      const description = /^[=+\-@]/.test(s.description) ? `'${s.description}` : s.description;
      expect(row).toEqual([
        s.id,
        s.posted_timestamp!.toISOString(),
        s.transaction_timestamp.toISOString(),
        description,
        s.reference,
        s.transaction_type,
        s.debit_credit,
        (Number(s.amount) / 100).toFixed(2),
        (balance / 100).toFixed(2),
      ]);
    });
    expect(rows.map((r) => r[3])).toContain('Check 1001 - Smith, "Jr." Farms');
    expect(rows.map((r) => r[3])).toContain('DAF grant / Fidelity\nCharitable');
    expect(rows[rows.length - 1]![8]).toBe((CLOSING / 100).toFixed(2));
  });

  it('serves BAI2 whose records, control totals and record counts an independent parser re-adds', async () => {
    const res = await fdxDownload(server, path, token, 'application/vnd.bai2');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/vnd.bai2');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="statement-2025-03-7788.bai"');
    expect(res.text).toMatch(/^[\x20-\x7e\n]*$/); // ASCII
    const file = parseBai2(res.text);
    expect(file.header).toMatchObject({ sender: '011000015', receiver: staff.ein, version: '2' });
    expect(file.header.date).toMatch(/^\d{6}$/);
    expect(file.trailer).toEqual(file.counted);
    expect(file.groups).toHaveLength(1);
    const group = file.groups[0]!;
    expect(group).toMatchObject({ status: '1', asOfDate: '250331', asOfTime: '2400', currency: 'USD' });
    expect(group.trailer).toEqual(group.counted);
    const [acct] = group.accounts;
    expect(acct!.accountNumber).toBe('4455667788');
    expect(acct!.trailer).toEqual(acct!.counted);
    expect(acct!.trailer.records).toBe(1 + inMonth.length + 1);
    expect(group.trailer.records).toBe(acct!.trailer.records + 2);
    expect(file.trailer.records).toBe(res.text.trim().split('\n').length);
    const summary = Object.fromEntries(acct!.summaries.map((s) => [s.typeCode, s]));
    expect(summary['010']!.amount).toBe(OPENING);
    expect(summary['015']!.amount).toBe(CLOSING);
    expect(summary['040']!.amount).toBe(OPENING);
    expect(summary['045']!.amount).toBe(CLOSING);
    expect(summary['100']).toMatchObject({ amount: CREDITS, itemCount: 3 });
    expect(summary['400']).toMatchObject({ amount: DEBITS, itemCount: 4 });
    expect(acct!.trailer.total).toBe(2 * OPENING + 2 * CLOSING + CREDITS + DEBITS + CREDITS + DEBITS);
    const stored = await storedLines();
    expect(acct!.details.map((d) => d.amount)).toEqual(stored.map((s) => Number(s.amount)));
    expect(acct!.details.map((d) => d.typeCode)).toEqual(['142', '475', '699', '399', '195', '495', '699']);
    expect(acct!.details[1]).toMatchObject({
      fundsType: 'Z',
      bankRef: 'CHK001',
      customerRef: '1001',
      text: 'Check 1001 - Smith, "Jr." Farms',
    });
    expect(acct!.details[4]).toMatchObject({ bankRef: 'TRF001', text: 'DAF grant - Fidelity Charitable' });
    expect(acct!.details[6]!.text).toBe('');
  });

  it('adds up for a month of thousands of transactions too', async () => {
    const big = await createAccount(t.db, staff, 'production', { openingBalance: 5_000_000 });
    await insertTransactions(
      t.db,
      big.id,
      Array.from({ length: 2500 }, (_, i) => ({
        at: new Date(Date.UTC(2025, 7, 1 + (i % 30), i % 24)),
        cents: 1 + ((i * 7919) % 500_000),
        direction: i % 2 ? 'DEBIT' : 'CREDIT',
      })),
    );
    const id = await createStatement(t.db, big.id, '2025-08-01', '2025-08-31');
    const file = parseBai2((await fdxDownload(server, `/accounts/${big.id}/statements/${id}`, token, 'application/vnd.bai2')).text);
    expect(file.trailer).toEqual(file.counted);
    const acct = file.groups[0]!.accounts[0]!;
    expect(acct.trailer).toEqual(acct.counted);
    const posted = await t.db
      .selectFrom('deposit_transactions')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('account_id', '=', big.id)
      .where('posted_timestamp', '<', new Date('2025-09-01T00:00:00Z'))
      .executeTakeFirstOrThrow();
    expect(acct.details).toHaveLength(Number(posted.n));
    const [header, ...rows] = parseCsv((await fdxDownload(server, `/accounts/${big.id}/statements/${id}`, token, 'text/csv')).text);
    expect(header![0]).toBe('transactionId');
    expect(rows).toHaveLength(acct.details.length);
  });

  it('follows Accept q-values and wildcards', async () => {
    expect((await fdxDownload(server, path, token, 'text/csv;q=0.5, application/vnd.bai2')).headers.get('content-type')).toBe(
      'application/vnd.bai2',
    );
    expect((await fdxDownload(server, path, token, 'image/png, text/*;q=0.1')).headers.get('content-type')).toMatch(/^text\/csv/);
    expect((await fdxDownload(server, path, token, 'application/pdf;q=0, text/csv')).headers.get('content-type')).toMatch(/^text\/csv/);
  });

  it('answers 406 with FDX code 1203 for a type it cannot produce, such as image/png', async () => {
    for (const accept of ['image/png', 'application/json', 'text/html', 'application/pdf;q=0']) {
      const res = await fdxGet(server, path, token, { headers: { accept } });
      expect(res.status, accept).toBe(406);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({
        type: 'about:blank',
        title: 'Not Acceptable',
        status: 406,
        code: 1203,
        message: 'Content type not supported',
        detail: expect.stringMatching(/application\/pdf, text\/csv, application\/vnd\.bai2/),
      });
    }
  });

  it('still says 404 before 406: an unknown statement is 1104 whatever the Accept', async () => {
    const res = await fdxGet(server, `/accounts/${account.id}/statements/00000000-0000-4000-8000-000000000000`, token, {
      headers: { accept: 'image/png' },
    });
    expect(res.body).toMatchObject({ status: 404, code: 1104 });
  });
});
