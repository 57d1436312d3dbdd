import { Readable } from 'node:stream';
import { decimalDollars, signed, type StatementContent } from './statement-content.js';

/**
 * The statement as CSV (RFC 4180): a header row, then one posted transaction per line in
 * posting order, CRLF line ends, fields quoted when they hold a comma, quote or line break.
 */
export const CSV_HEADER = [
  'transactionId',
  'postedTimestamp',
  'transactionTimestamp',
  'description',
  'reference',
  'transactionType',
  'debitCreditMemo',
  'amount',
  'balance',
] as const;

/**
 * Spreadsheets run a cell that starts with = + - @ (or a tab/CR) as a formula; text from bank
 * counterparties is prefixed with an apostrophe so opening the file cannot run anything.
 */
function neutralize(text: string): string {
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

function csvLine(fields: readonly string[]): string {
  return `${fields.map(csvField).join(',')}\r\n`;
}

export function renderCsv(content: StatementContent): Readable {
  async function* lines() {
    yield csvLine(CSV_HEADER);
    let balance = content.openingBalance;
    for await (const row of content.lines()) {
      balance += signed(row);
      yield csvLine([
        row.id,
        row.posted_timestamp!.toISOString(),
        row.transaction_timestamp.toISOString(),
        neutralize(row.description),
        neutralize(row.reference),
        row.transaction_type,
        row.debit_credit,
        decimalDollars(Number(row.amount)),
        decimalDollars(balance),
      ]);
    }
  }
  return Readable.from(lines());
}
