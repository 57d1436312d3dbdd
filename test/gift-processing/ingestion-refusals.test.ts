import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MailBatchIngestor } from '../../src/gift-processing/mail-batch-ingestor.js';
import { FolderStorage } from '../../src/storage/folder-storage.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { giftParties } from '../helpers/gift.js';
import {
  buildMailBatch,
  checkLine,
  createMailBatch,
  csvOf,
  tiffImage,
  zipBomb,
  zipOf,
  zipWithEntryName,
  type IndexRow,
} from '../helpers/mail-batch.js';
import { tempDir } from '../helpers/temp-dirs.js';

let t: TestDatabase;
let storage: FolderStorage;
let root: string;
let parties: Awaited<ReturnType<typeof giftParties>>;
let tiff: Buffer;
beforeAll(async () => {
  t = await createTestDatabase();
  root = tempDir();
  storage = new FolderStorage(root);
  parties = await giftParties(t.db);
  tiff = await tiffImage({ text: '$10.00' });
});
afterAll(async () => {
  await t?.drop();
});

/** Uploads `zip` as a new batch of the lockbox and runs one tick. */
async function ingest(zip: Buffer) {
  const batch = await createMailBatch(t.db, parties.lockbox, parties.provider.id, { status: 'uploaded' });
  await storage.put(batch.storageKey, zip);
  const tick = await new MailBatchIngestor({ db: t.db, storage }).runOnce();
  expect(tick.ingested?.batchId).toBe(batch.id);
  const row = await t.db.selectFrom('mail_batches').selectAll().where('id', '=', batch.id).executeTakeFirstOrThrow();
  return { batch, row };
}

/** Nothing of the batch kept: no mail item, scan, donation, deposit, nor stored image. */
async function expectNothingKept(batchId: string) {
  expect(await t.db.selectFrom('mail_items').select('id').where('batch_id', '=', batchId).execute()).toEqual([]);
  expect(await t.db.selectFrom('mail_item_scans').select('file_id').where('batch_id', '=', batchId).execute()).toEqual([]);
  expect(await t.db.selectFrom('donations').select('id').where('organization_id', '=', parties.nonprofit.id).execute()).toEqual([]);
  expect(await t.db.selectFrom('deposits').select('id').where('organization_id', '=', parties.nonprofit.id).execute()).toEqual([]);
  expect(fs.existsSync(path.join(root, 'scans', batchId)) ? fs.readdirSync(path.join(root, 'scans', batchId)) : []).toEqual([]);
}

const good: IndexRow[] = [checkLine('E1', '10.00', 'a.tif'), checkLine('E2', '20.00', 'b.tif')];

describe('a batch refused whole', () => {
  const cases: [string, () => Promise<Buffer>, number | null, string][] = [
    ['not a ZIP', () => Promise.resolve(Buffer.from('this is a PDF, honest')), null, 'the upload is not a ZIP archive'],
    ['a zip bomb', () => zipBomb(good, 'a.tif', 4), null, 'the entry "a.tif" expands more than 200 times its compressed size'],
    ['an entry climbing out with ..', () => zipWithEntryName(good, '../x.tif', tiff), null, 'the entry name "../x.tif" contains ..'],
    ['no index', () => zipOf([{ name: 'a.tif', data: tiff }]), null, 'the archive has no index.csv at its root'],
    ['a missing image', () => buildMailBatch(good, { 'a.tif': tiff }), 3, 'the image "b.tif" is not in the archive'],
    [
      'an image that is not a TIFF',
      async () => buildMailBatch(good, { 'a.tif': tiff, 'b.tif': await sharp(tiff).jpeg().toBuffer() }),
      3,
      'the image "b.tif" is not a TIFF',
    ],
    [
      'a duplicate envelope id',
      () => buildMailBatch([...good, checkLine('E1', '5.00', 'a.tif')], { 'a.tif': tiff, 'b.tif': tiff }),
      4,
      "the envelope E1 comes back after another envelope's lines (first at line 2)",
    ],
    ['an unknown column', () => buildMailBatch([{ ...good[0]!, amont: '1.00' }], { 'a.tif': tiff }), 1, 'unknown column "amont"'],
    [
      'an index that is not UTF-8',
      () => zipOf([{ name: 'index.csv', data: Buffer.from([0x65, 0xff, 0xfe, 0x0a]) }]),
      null,
      'the index is not UTF-8',
    ],
  ];

  for (const [name, build, line, reason] of cases) {
    it(`${name}: refused with its line and reason, nothing kept`, async () => {
      const { batch, row } = await ingest(await build());
      expect(row).toMatchObject({ status: 'refused', refusal_line: line, refusal_reason: reason, lease_until: null });
      await expectNothingKept(batch.id);
    });
  }

  it('a CSV that does not parse: refused naming the line', async () => {
    const text = csvOf(good) + 'E3,2026-11-27,check,"1.00"x\r\n';
    const { batch, row } = await ingest(await buildMailBatch(text, { 'a.tif': tiff, 'b.tif': tiff }));
    expect(row.status).toBe('refused');
    expect(row.refusal_line).toBe(4);
    expect(row.refusal_reason).toMatch(/^the index is not valid CSV: /);
    await expectNothingKept(batch.id);
  });
});

describe('an envelope in review', () => {
  it('an unparseable amount: the mail item needs review with its line, and no money moves', async () => {
    const { batch, row } = await ingest(await buildMailBatch([checkLine('E9', '1.250,00', 'a.tif')], { 'a.tif': tiff }));
    expect(row.status).toBe('ingested');
    const items = await t.db.selectFrom('mail_items').selectAll().where('batch_id', '=', batch.id).execute();
    expect(items.map((i) => [i.envelope_id, i.status, i.review_line, i.review_reason])).toEqual([
      ['E9', 'needs_review', 2, 'the amount "1.250,00" does not parse'],
    ]);
    expect(await t.db.selectFrom('mail_item_scans').select('file_id').where('batch_id', '=', batch.id).execute()).toHaveLength(1);
    expect(await t.db.selectFrom('donations').select('id').where('organization_id', '=', parties.nonprofit.id).execute()).toEqual([]);
    expect(await t.db.selectFrom('deposits').select('id').where('organization_id', '=', parties.nonprofit.id).execute()).toEqual([]);
    expect(await t.db.selectFrom('events').select('id').where('organization_id', '=', parties.nonprofit.id).execute()).toEqual([]);
  });
});
