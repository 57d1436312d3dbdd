import { parse } from 'csv-parse/sync';
import type { DonorJson } from '../db/schema.js';
import type { MailItemStatus, ScanImageLabel } from '../db/schema-gift.js';

/**
 * The batch's index.csv read into a plan (docs/gift-processing.md, "The index" and "What a batch
 * becomes"). Pure: no I/O. A problem of the whole batch is a refusal naming its line (1 is the
 * header); a problem of one check makes its envelope needs_review.
 */

export const INDEX_COLUMNS = [
  'envelope_id',
  'received_at',
  'item_type',
  'amount',
  'check_number',
  'routing_number',
  'payer_name',
  'donor_first_name',
  'donor_last_name',
  'donor_email',
  'donor_phone',
  'donor_address_line1',
  'donor_address_line2',
  'donor_city',
  'donor_state',
  'donor_postal_code',
  'donor_country',
  'memo',
  'purpose',
  'front_image',
  'back_image',
] as const;
export type IndexColumn = (typeof INDEX_COLUMNS)[number];
const REQUIRED_COLUMNS: readonly IndexColumn[] = ['envelope_id', 'received_at', 'item_type', 'front_image'];

export const ITEM_TYPES = ['check', 'envelope', 'correspondence', 'return_to_sender', 'unrelated'] as const;
export type ItemType = (typeof ITEM_TYPES)[number];
const REJECTING: readonly ItemType[] = ['return_to_sender', 'unrelated'];

const ENVELOPE_ID = /^[0-9A-Za-z._-]{1,64}$/;

export interface PlannedImage {
  /** The entry's path inside the ZIP. */
  path: string;
  label: ScanImageLabel;
  line: number;
}

export interface PlannedCheck {
  line: number;
  /** Cents. */
  amount: number;
  checkNumber: string | null;
  routingNumber: string | null;
  donor: DonorJson;
  memo: string;
  purpose: string;
}

export interface PlannedEnvelope {
  envelopeId: string;
  /** The envelope's first line. */
  line: number;
  receivedAt: Date;
  status: Exclude<MailItemStatus, 'processing'>;
  reviewLine: number | null;
  reviewReason: string | null;
  /** Every image of its lines, in order: its scan. */
  images: PlannedImage[];
  /** Its checks; only a processed envelope's become donations. */
  checks: PlannedCheck[];
}

export type IndexPlan = { ok: true; envelopes: PlannedEnvelope[] } | { ok: false; line: number; reason: string };

/** "125.00" or "1,250.00" → cents; undefined for anything else (no sign, exactly two decimals). */
export function parseAmount(text: string): number | undefined {
  if (!/^(?:\d{1,3}(?:,\d{3})+|\d+)\.\d{2}$/.test(text)) return undefined;
  const digits = text.replace(/[,.]/g, '').replace(/^0+(?=\d)/, '');
  // Beyond safe integers a Number would round: refused rather than misread.
  return BigInt(digits) <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(digits) : undefined;
}

/** Cents as the index writes dollars, with thousands separators: 125000 → "1,250.00". */
export function formatAmount(cents: number): string {
  const dollars = Math.floor(cents / 100).toString();
  return `${dollars.replace(/\B(?=(\d{3})+$)/g, ',')}.${(cents % 100).toString().padStart(2, '0')}`;
}

/** The ABA routing number's checksum: 3·(d1+d4+d7) + 7·(d2+d5+d8) + (d3+d6+d9) ≡ 0 (mod 10). */
export function validRoutingNumber(text: string): boolean {
  if (!/^\d{9}$/.test(text)) return false;
  const d = [...text].map(Number);
  const sum = 3 * (d[0]! + d[3]! + d[6]!) + 7 * (d[1]! + d[4]! + d[7]!) + (d[2]! + d[5]! + d[8]!);
  return sum % 10 === 0;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** RFC 3339, or a date YYYY-MM-DD (midnight UTC); undefined when neither or not a real day. */
export function parseReceivedAt(text: string): Date | undefined {
  const match = RFC3339.exec(text) ?? DATE.exec(text);
  if (!match) return undefined;
  const [, year, month, day] = match;
  const calendar = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (calendar.getUTCFullYear() !== Number(year) || calendar.getUTCMonth() !== Number(month) - 1 || calendar.getUTCDate() !== Number(day)) {
    return undefined;
  }
  if (match.length === 4) return calendar;
  const [, , , , hour, minute, second] = match;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 60) return undefined;
  const when = new Date(text.replace(' ', 'T'));
  return Number.isNaN(when.getTime()) ? undefined : when;
}

type Row = Partial<Record<IndexColumn, string>>;

function donorOf(row: Row): DonorJson {
  const donor: DonorJson = {};
  const first = row.donor_first_name?.trim();
  const last = row.donor_last_name?.trim();
  if (first) donor.first_name = first;
  if (last) donor.last_name = last;
  const full = [first, last].filter(Boolean).join(' ') || row.payer_name?.trim();
  if (full) donor.full_name = full;
  if (row.donor_email?.trim()) donor.email = row.donor_email.trim();
  if (row.donor_phone?.trim()) donor.phone = row.donor_phone.trim();
  const line1 = row.donor_address_line1?.trim();
  const city = row.donor_city?.trim();
  const state = row.donor_state?.trim();
  const postal = row.donor_postal_code?.trim();
  if (line1 && city && state && postal) {
    const line2 = row.donor_address_line2?.trim();
    donor.address = {
      line1,
      ...(line2 ? { line2 } : {}),
      city,
      state,
      postal_code: postal,
      country: (row.donor_country?.trim() || 'US').toUpperCase(),
    };
  }
  return donor;
}

/** The published Donor's maximum lengths (full_name is the first and last names, or payer_name). */
const DONOR_MAX_LENGTHS: readonly [IndexColumn, number][] = [
  ['payer_name', 255],
  ['donor_first_name', 127],
  ['donor_last_name', 127],
  ['donor_email', 255],
  ['donor_phone', 20],
];

/** Why a check line cannot become a donation, or undefined. */
function checkProblem(row: Row): string | undefined {
  const amount = row.amount?.trim() ?? '';
  if (parseAmount(amount) === undefined) return `the amount ${JSON.stringify(amount)} does not parse`;
  if (parseAmount(amount) === 0) return 'the amount is zero';
  const routing = row.routing_number?.trim();
  if (routing && !validRoutingNumber(routing)) return `the routing number ${JSON.stringify(routing)} fails its checksum`;
  for (const [column, max] of DONOR_MAX_LENGTHS) {
    const value = row[column]?.trim() ?? '';
    if (value.length > max) return `the ${column} is longer than ${max} characters`;
  }
  const country = row.donor_country?.trim();
  if (country && !/^[A-Za-z]{2}$/.test(country)) return `the donor country ${JSON.stringify(country)} is not two letters`;
  return undefined;
}

function labelsOf(type: ItemType): [ScanImageLabel, ScanImageLabel] {
  if (type === 'check') return ['check_front', 'check_back'];
  if (type === 'correspondence' || type === 'unrelated') return ['correspondence', 'correspondence'];
  return ['envelope', 'envelope'];
}

interface Line {
  number: number;
  row: Row;
}

function parseRecords(text: string): { ok: true; header: string[]; lines: Line[] } | { ok: false; line: number; reason: string } {
  let records: { record: string[]; info: { lines: number } }[];
  try {
    records = parse(text, {
      info: true,
      bom: true,
      relax_column_count: false,
      relax_quotes: false,
      skip_empty_lines: false,
    }) as unknown as typeof records;
  } catch (error) {
    const { lines, message } = error as { lines?: number; message: string };
    return { ok: false, line: lines ?? 1, reason: `the index is not valid CSV: ${message}` };
  }
  const [first, ...rest] = records;
  if (!first) return { ok: false, line: 1, reason: 'the index is empty' };
  const header = first.record.map((name) => name.trim());
  let previousEnd = first.info.lines;
  const lines = rest.map(({ record, info }) => {
    // A record's first line: the one after the previous record's last (quoted fields may span lines).
    const number = previousEnd + 1;
    previousEnd = info.lines;
    return { number, row: Object.fromEntries(header.map((name, i) => [name, record[i] ?? ''])) as Row };
  });
  return { ok: true, header, lines };
}

function checkHeader(header: string[]): string | undefined {
  const unknown = header.filter((name) => !(INDEX_COLUMNS as readonly string[]).includes(name));
  if (unknown.length) return `unknown column ${JSON.stringify(unknown[0])}`;
  const twice = header.find((name, i) => header.indexOf(name) !== i);
  if (twice) return `the column ${JSON.stringify(twice)} appears twice`;
  const missing = REQUIRED_COLUMNS.filter((name) => !header.includes(name));
  if (missing.length) return `the required column ${JSON.stringify(missing[0])} is missing`;
  return undefined;
}

/** Reads the index: a plan of envelopes in order, or the refusal of the whole batch. */
export function planIndex(text: string): IndexPlan {
  const parsed = parseRecords(text);
  if (!parsed.ok) return parsed;
  const headerProblem = checkHeader(parsed.header);
  if (headerProblem) return { ok: false, line: 1, reason: headerProblem };
  if (parsed.lines.length === 0) return { ok: false, line: 1, reason: 'the index has no lines' };
  const envelopes: PlannedEnvelope[] = [];
  const seen = new Map<string, number>();
  for (const { number, row } of parsed.lines) {
    const envelopeId = row.envelope_id?.trim() ?? '';
    if (!ENVELOPE_ID.test(envelopeId))
      return { ok: false, line: number, reason: `the envelope_id ${JSON.stringify(envelopeId)} is not valid` };
    const type = row.item_type?.trim() as ItemType;
    if (!ITEM_TYPES.includes(type))
      return { ok: false, line: number, reason: `the item_type ${JSON.stringify(row.item_type)} is not known` };
    const front = row.front_image?.trim() ?? '';
    if (!front) return { ok: false, line: number, reason: 'the front_image is empty' };
    let envelope = envelopes.at(-1);
    if (envelope?.envelopeId !== envelopeId) {
      const earlier = seen.get(envelopeId);
      if (earlier !== undefined) {
        return {
          ok: false,
          line: number,
          reason: `the envelope ${envelopeId} comes back after another envelope's lines (first at line ${earlier})`,
        };
      }
      const receivedAt = parseReceivedAt(row.received_at?.trim() ?? '');
      if (!receivedAt)
        return { ok: false, line: number, reason: `the received_at ${JSON.stringify(row.received_at)} is not RFC 3339 or YYYY-MM-DD` };
      envelope = {
        envelopeId,
        line: number,
        receivedAt,
        status: 'processed',
        reviewLine: null,
        reviewReason: null,
        images: [],
        checks: [],
      };
      envelopes.push(envelope);
      seen.set(envelopeId, number);
    }
    const [frontLabel, backLabel] = labelsOf(type);
    envelope.images.push({ path: front, label: frontLabel, line: number });
    const back = row.back_image?.trim();
    if (back) envelope.images.push({ path: back, label: backLabel, line: number });
    if (REJECTING.includes(type)) {
      if (envelope.status !== 'rejected')
        Object.assign(envelope, { status: 'rejected', reviewLine: number, reviewReason: `the envelope holds a ${type} item` });
      continue;
    }
    if (type !== 'check') continue;
    const problem = checkProblem(row);
    if (problem) {
      if (envelope.status === 'processed') Object.assign(envelope, { status: 'needs_review', reviewLine: number, reviewReason: problem });
      continue;
    }
    envelope.checks.push({
      line: number,
      amount: parseAmount(row.amount!.trim())!,
      checkNumber: row.check_number?.trim() || null,
      routingNumber: row.routing_number?.trim() || null,
      donor: donorOf(row),
      memo: row.memo?.trim() ?? '',
      purpose: row.purpose?.trim() ?? '',
    });
  }
  return { ok: true, envelopes };
}

/** What a processed envelope deposits: the sum of its checks (cents). */
export function depositTotal(envelope: PlannedEnvelope): number {
  return envelope.checks.reduce((sum, check) => sum + check.amount, 0);
}
