import sharp from 'sharp';
import yazl from 'yazl';
import type { Db } from '../../src/db/database.js';
import { prefixedId } from '../../src/db/ids.js';
import type { Environment } from '../../src/db/schema.js';

/** Builders of mail batches (docs/gift-processing.md, "The batch format") for the tests. */

export type IndexRow = Record<string, string>;

/**
 * A real TIFF: a check-like picture with `text` (an amount, a name) drawn large, so a
 * screenshot tells it from a blank page. LZW-compressed, as a scanner writes them.
 */
export async function tiffImage({
  width = 600,
  height = 270,
  text = '',
}: { width?: number; height?: number; text?: string } = {}): Promise<Buffer> {
  const escaped = text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <rect width="100%" height="100%" fill="#f4f1e6"/>
    <rect x="8" y="8" width="${width - 16}" height="${height - 16}" fill="none" stroke="#1d3b6a" stroke-width="4"/>
    <line x1="24" y1="${height * 0.7}" x2="${width - 24}" y2="${height * 0.7}" stroke="#333" stroke-width="2"/>
    <text x="${width / 2}" y="${height / 2}" font-family="sans-serif" font-size="${Math.round(height / 5)}" text-anchor="middle" fill="#111">${escaped}</text>
  </svg>`;
  return sharp(Buffer.from(svg)).tiff({ compression: 'lzw' }).toBuffer();
}

function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** The index text of `rows`: a header of every column used (first seen first), CRLF lines. */
export function csvOf(rows: readonly IndexRow[], columns?: readonly string[]): string {
  const header = columns ?? [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const lines = [header, ...rows.map((row) => header.map((column) => row[column] ?? ''))];
  return lines.map((line) => line.map(csvField).join(',')).join('\r\n') + '\r\n';
}

/** A ZIP of its entries, in order (yazl; deflated unless `store`). */
export async function zipOf(entries: readonly { name: string; data: Buffer; store?: boolean }[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const entry of entries) zip.addBuffer(entry.data, entry.name, { compress: !entry.store, mtime: new Date(0) });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A batch: index.csv from `lines` (rows, or the CSV text itself) and the images by path. */
export function buildMailBatch(lines: readonly IndexRow[] | string, images: Record<string, Buffer>): Promise<Buffer> {
  const index = typeof lines === 'string' ? lines : csvOf(lines);
  return zipOf([
    { name: 'index.csv', data: Buffer.from(index, 'utf8') },
    ...Object.entries(images).map(([name, data]) => ({ name, data, store: true })),
  ]);
}

/** A zip bomb: index.csv and `name`, `megabytes` of zeros deflated far beyond 200 times. */
export function zipBomb(lines: readonly IndexRow[], name = 'bomb.tif', megabytes = 8): Promise<Buffer> {
  return zipOf([
    { name: 'index.csv', data: Buffer.from(csvOf(lines)) },
    { name, data: Buffer.alloc(megabytes * 1024 * 1024) },
  ]);
}

/**
 * An archive with an entry named `name` (e.g. `../x.tif`, `/etc/x.tif`, `a\\x.tif`), which
 * yazl refuses to write: the entry is written under a placeholder of the same length and the
 * name's bytes patched into its local and central headers.
 */
export async function zipWithEntryName(lines: readonly IndexRow[], name: string, data: Buffer): Promise<Buffer> {
  const placeholder = 'q'.repeat(Buffer.byteLength(name));
  const zip = await zipOf([
    { name: 'index.csv', data: Buffer.from(csvOf(lines)) },
    { name: placeholder, data, store: true },
  ]);
  const from = Buffer.from(placeholder);
  const to = Buffer.from(name);
  let at = zip.indexOf(from);
  let patched = 0;
  while (at !== -1) {
    to.copy(zip, at);
    patched += 1;
    at = zip.indexOf(from, at + to.length);
  }
  if (patched !== 2) throw new Error(`expected the name twice (local and central headers), found it ${patched} times`);
  return zip;
}

/** A check line of the index, with the columns a lockbox provider fills in. */
export function checkLine(envelopeId: string, amount: string, front: string, extra: IndexRow = {}): IndexRow {
  return {
    envelope_id: envelopeId,
    received_at: '2026-11-27',
    item_type: 'check',
    amount,
    check_number: '1042',
    routing_number: '011000015',
    payer_name: 'Ada Lovelace',
    donor_first_name: 'Ada',
    donor_last_name: 'Lovelace',
    donor_email: 'ada@example.com',
    memo: 'For the pantry',
    purpose: 'General',
    front_image: front,
    back_image: '',
    ...extra,
  };
}

/** A mail batch row of `lockbox`, as POST /v1/mailbox/upload_url makes it: awaiting its upload. */
export async function createMailBatch(
  db: Db,
  lockbox: { id: string; environment: Environment },
  providerId: string,
  options: { status?: 'awaiting_upload' | 'uploaded'; uploadExpiresAt?: Date } = {},
): Promise<{ id: string; storageKey: string }> {
  const id = prefixedId('batch');
  const storageKey = `batches/${id}.zip`;
  await db
    .insertInto('mail_batches')
    .values({
      id,
      environment: lockbox.environment,
      provider_organization_id: providerId,
      lockbox_id: lockbox.id,
      storage_key: storageKey,
      upload_expires_at: options.uploadExpiresAt ?? new Date(Date.now() + 3_600_000),
      status: options.status ?? 'awaiting_upload',
      uploaded_at: options.status === 'uploaded' ? new Date() : null,
      size_bytes: null,
      sha256: null,
      refusal_line: null,
      refusal_reason: null,
      lease_until: null,
      ingested_at: null,
    })
    .execute();
  return { id, storageKey };
}
