import PDFDocument from 'pdfkit';
import type { Readable } from 'node:stream';
import { maskAccountNumber } from './shapes.js';
import { formatDollars, signed, type StatementContent } from './statement-content.js';

/**
 * The statement as a PDF (pdfkit, standard Helvetica, so any viewer opens it): organization,
 * account, period, balance summary, then every posted transaction with its running balance,
 * the table header repeated on each page. The document streams while the lines are read.
 */

const MARGIN = 50;
const ROW_HEIGHT = 13;
// Date, description, reference, debit, credit, balance.
const COLUMNS = [
  { title: 'Posted', x: MARGIN, width: 58, align: 'left' },
  { title: 'Description', x: MARGIN + 60, width: 206, align: 'left' },
  { title: 'Reference', x: MARGIN + 268, width: 70, align: 'left' },
  { title: 'Debit', x: MARGIN + 340, width: 55, align: 'right' },
  { title: 'Credit', x: MARGIN + 397, width: 55, align: 'right' },
  { title: 'Balance', x: MARGIN + 454, width: 58, align: 'right' },
] as const;

/** One line per cell: line breaks in bank text become spaces, long text is cut with an ellipsis. */
const clip = (value: string, max: number) => {
  const text = value.replace(/\s+/g, ' ').trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
};

export function renderPdf(content: StatementContent): Readable {
  const { account, organization, statement } = content;
  const doc = new PDFDocument({
    size: 'LETTER',
    margin: MARGIN,
    compress: true,
    info: { Title: `Statement ${statement.period_start} to ${statement.period_end}`, Author: organization.name, Producer: 'Almoner' },
  });
  let page = 1;

  const cell = (index: number, text: string, y: number) => {
    const column = COLUMNS[index]!;
    doc.text(text, column.x, y, { width: column.width, align: column.align, lineBreak: false });
  };
  const tableHeader = (y: number) => {
    doc.font('Helvetica-Bold').fontSize(8);
    COLUMNS.forEach((column, i) => cell(i, column.title, y));
    doc
      .moveTo(MARGIN, y + 11)
      .lineTo(doc.page.width - MARGIN, y + 11)
      .lineWidth(0.5)
      .stroke();
    doc.font('Helvetica');
    return y + ROW_HEIGHT + 2;
  };
  const footer = () => {
    doc.font('Helvetica').fontSize(7).fillColor('#555555');
    doc.text(
      `${organization.name} · account ${maskAccountNumber(account.account_number)} · ${statement.period_start} to ${statement.period_end} · page ${page}`,
      MARGIN,
      doc.page.height - MARGIN + 10,
      { lineBreak: false },
    );
    doc.fillColor('black');
  };

  doc.font('Helvetica-Bold').fontSize(16).text(organization.name);
  doc.font('Helvetica').fontSize(11).text('Deposit account statement').moveDown(0.8);
  doc.fontSize(9);
  const facts: [string, string][] = [
    ['Account', `${account.product_name}${account.nickname ? ` (${account.nickname})` : ''}`],
    ['Account number', account.account_number],
    ['Routing number', account.routing_transit_number],
    ['Statement period', `${statement.period_start} to ${statement.period_end}`],
    ['Opening balance', `$${formatDollars(content.openingBalance)}`],
    [`Credits (${content.creditCount})`, `$${formatDollars(content.credits)}`],
    [`Debits (${content.debitCount})`, `$${formatDollars(content.debits)}`],
    ['Closing balance', `$${formatDollars(content.closingBalance)}`],
  ];
  for (const [label, value] of facts) {
    const y = doc.y;
    doc.font('Helvetica-Bold').text(label, MARGIN, y, { width: 110, lineBreak: false });
    doc.font('Helvetica').text(value, MARGIN + 115, y, { lineBreak: false });
    doc.y = y + 13;
  }

  void (async () => {
    let y = tableHeader(doc.y + 14);
    let balance = content.openingBalance;
    doc.fontSize(8);
    for await (const row of content.lines()) {
      // The client went away (or it was a HEAD request): stop reading the database.
      if (doc.destroyed) return;
      if (y > doc.page.height - MARGIN - ROW_HEIGHT) {
        footer();
        doc.addPage();
        page += 1;
        y = tableHeader(MARGIN);
        doc.fontSize(8);
      }
      balance += signed(row);
      const amount = formatDollars(Number(row.amount));
      cell(0, row.posted_timestamp!.toISOString().slice(0, 10), y);
      cell(1, clip(row.description, 52), y);
      cell(2, clip(row.reference, 16), y);
      cell(3, row.debit_credit === 'DEBIT' ? amount : '', y);
      cell(4, row.debit_credit === 'CREDIT' ? amount : '', y);
      cell(5, formatDollars(balance), y);
      y += ROW_HEIGHT;
    }
    if (y > doc.page.height - MARGIN - 3 * ROW_HEIGHT) {
      footer();
      doc.addPage();
      page += 1;
      y = MARGIN;
    }
    doc
      .font('Helvetica-Bold')
      .fontSize(9)
      .text(`Closing balance $${formatDollars(content.closingBalance)}`, MARGIN, y + 8, { lineBreak: false });
    footer();
    doc.end();
  })().catch((error: unknown) => doc.destroy(error as Error));
  return doc;
}
