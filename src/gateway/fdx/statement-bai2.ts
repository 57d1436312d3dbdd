import { Readable } from 'node:stream';
import type { TransactionRow } from './activity-repository.js';
import type { StatementContent } from './statement-content.js';

/**
 * The statement as a BAI2 file (Cash Management Balance Reporting, version 2; docs/api.md, "FDX
 * bank-data API", Statements): one file, one group, one account. Records 01, 02, 03
 * (opening/closing ledger and available balances, credit and debit totals), one 16 per posted
 * transaction, then 49, 98 and 99 whose control totals and record counts are summed from exactly
 * what was written. Amounts are whole cents. Records are variable length (the 01 leaves record
 * length and block size empty), so no 88 continuations are needed.
 */

const CREDIT_CODES: Partial<Record<TransactionRow['transaction_type'], string>> = {
  DEPOSIT: '301', // commercial deposit
  ATMDEPOSIT: '301',
  DIRECTDEPOSIT: '142', // ACH credit received
  PREAUTHORIZEDDEPOSIT: '165', // preauthorized ACH credit
  POSCREDIT: '169', // miscellaneous ACH credit
  TRANSFER: '195', // incoming money transfer
};
const DEBIT_CODES: Partial<Record<TransactionRow['transaction_type'], string>> = {
  CHECK: '475', // check paid
  PREAUTHORIZEDWITHDRAWAL: '455', // preauthorized ACH debit
  BILLPAYMENT: '469', // miscellaneous ACH debit
  TRANSFER: '495', // outgoing money transfer
};

export function baiTypeCode(row: Pick<TransactionRow, 'debit_credit' | 'transaction_type'>): string {
  return row.debit_credit === 'CREDIT' ? (CREDIT_CODES[row.transaction_type] ?? '399') : (DEBIT_CODES[row.transaction_type] ?? '699');
}

/** Reference fields may not hold the delimiters: letters, digits and dashes only. */
const reference = (value: string | null) => (value ?? '').replace(/[^A-Za-z0-9-]/g, '').slice(0, 30);
/** Text ends its record (no slash after it); kept to printable ASCII without slashes. */
const text = (value: string) =>
  value
    .replace(/\s+/g, ' ')
    .normalize('NFKD')
    .replace(/[^\x20-\x7e]/g, '')
    .replace(/\//g, '-')
    .trim();

const yymmdd = (date: Date) => date.toISOString().slice(2, 10).replace(/-/g, '');
const hhmm = (date: Date) => date.toISOString().slice(11, 16).replace(':', '');

export function renderBai2(content: StatementContent, now: Date = new Date()): Readable {
  const { account, organization, statement } = content;
  const sender = account.routing_transit_number;
  const receiver = organization.ein;
  async function* records() {
    yield `01,${sender},${receiver},${yymmdd(now)},${hhmm(now)},${statement.period_start.slice(0, 7).replace('-', '')},,,2/\n`;
    yield `02,${receiver},${sender},1,${yymmdd(new Date(`${statement.period_end}T00:00:00Z`))},2400,USD,2/\n`;
    const summaries: [string, number, string, string][] = [
      ['010', content.openingBalance, '', ''],
      ['015', content.closingBalance, '', ''],
      ['040', content.openingBalance, '', ''],
      ['045', content.closingBalance, '', ''],
      ['100', content.credits, String(content.creditCount), 'Z'],
      ['400', content.debits, String(content.debitCount), 'Z'],
    ];
    yield `03,${account.account_number},${account.currency},${summaries.map((s) => s.join(',')).join(',')}/\n`;
    // The account control total is the algebraic sum of every amount in the 03 and its 16s.
    let accountTotal = summaries.reduce((sum, [, amount]) => sum + amount, 0);
    let accountRecords = 1;
    for await (const row of content.lines()) {
      const description = text(row.description);
      yield `16,${baiTypeCode(row)},${Number(row.amount)},Z,${reference(row.reference)},${reference(row.check_number === null ? '' : String(row.check_number))},${description || '/'}\n`;
      accountTotal += Number(row.amount);
      accountRecords += 1;
    }
    accountRecords += 1; // the 49 counts itself
    yield `49,${accountTotal},${accountRecords}/\n`;
    const groupRecords = 1 + accountRecords + 1; // 02, the account's records, 98
    yield `98,${accountTotal},1,${groupRecords}/\n`;
    yield `99,${accountTotal},1,${1 + groupRecords + 1}/\n`; // 01, the group, 99
  }
  return Readable.from(records());
}
