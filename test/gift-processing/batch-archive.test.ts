import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { ARCHIVE_LIMITS, BatchArchive, BatchRefusal } from '../../src/gift-processing/batch-archive.js';
import { checkImages } from '../../src/gift-processing/batch-images.js';
import { planIndex } from '../../src/gift-processing/batch-index.js';
import { tempDir } from '../helpers/temp-dirs.js';
import { buildMailBatch, checkLine, tiffImage, zipBomb, zipOf, zipWithEntryName } from '../helpers/mail-batch.js';

const dir = tempDir();
let files = 0;
function fileOf(bytes: Buffer): string {
  const file = path.join(dir, `${files++}.zip`);
  fs.writeFileSync(file, bytes);
  return file;
}

async function refusalOf(bytes: Buffer, limits = ARCHIVE_LIMITS): Promise<BatchRefusal> {
  const error = await BatchArchive.open(fileOf(bytes), limits).then(
    (archive) => {
      archive.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BatchRefusal);
  return error as BatchRefusal;
}

const lines = [checkLine('E1', '10.00', 'a.tif')];

describe('BatchArchive', () => {
  it('lists the entries and reads them, bounded', async () => {
    const image = await tiffImage({ text: '$10.00' });
    const archive = await BatchArchive.open(fileOf(await buildMailBatch(lines, { 'a.tif': image })));
    try {
      expect(archive.entries().map((e) => e.name)).toEqual(['index.csv', 'a.tif']);
      expect((await archive.read('a.tif', 1 << 20)).equals(image)).toBe(true);
      await expect(archive.read('a.tif', 10)).rejects.toThrow(/larger than 10 bytes/);
    } finally {
      archive.close();
    }
  });

  it('builds test scans that show their text (not blank, and unlike one another)', async () => {
    const [one, other] = [await tiffImage({ text: '$125.00' }), await tiffImage({ text: '$9,999.00' })];
    const stats = await sharp(one).stats();
    expect(stats.channels[0]!.stdev).toBeGreaterThan(10);
    const pixels = async (tiff: Buffer) => sharp(tiff).raw().toBuffer();
    expect((await pixels(one)).equals(await pixels(other))).toBe(false);
  });

  it('refuses what is not a ZIP', async () => {
    expect((await refusalOf(Buffer.from('envelope_id,received_at\n'))).reason).toBe('the upload is not a ZIP archive');
    expect((await refusalOf(Buffer.alloc(0))).reason).toBe('the upload is not a ZIP archive');
  });

  it('refuses an entry expanding more than 200 times, from the central directory', async () => {
    const refusal = await refusalOf(await zipBomb(lines, 'bomb.tif', 4));
    expect(refusal.reason).toBe('the entry "bomb.tif" expands more than 200 times its compressed size');
    expect(refusal.line).toBeNull();
  });

  it('refuses entry names that are absolute, climb with .., or hold a backslash', async () => {
    const data = Buffer.from('x');
    expect((await refusalOf(await zipWithEntryName(lines, '../x.tif', data))).reason).toBe('the entry name "../x.tif" contains ..');
    expect((await refusalOf(await zipOf([{ name: 'scan..1.tif', data }]))).reason).toBe('the entry name "scan..1.tif" contains ..');
    expect((await refusalOf(await zipWithEntryName(lines, '/etc/x.tif', data))).reason).toBe('the entry name "/etc/x.tif" is absolute');
    expect((await refusalOf(await zipWithEntryName(lines, 'a\\x.tif', data))).reason).toBe(
      'the entry name "a\\\\x.tif" contains a backslash',
    );
  });

  it('refuses too many entries and too many expanded bytes', async () => {
    const three = await zipOf(['a', 'b', 'c'].map((name) => ({ name, data: Buffer.from('hello hello') })));
    expect((await refusalOf(three, { ...ARCHIVE_LIMITS, maxEntries: 2 })).reason).toBe('the archive holds 3 entries (at most 2)');
    expect((await refusalOf(three, { ...ARCHIVE_LIMITS, maxExpandedBytes: 30 })).reason).toBe('the archive expands to more than 30 bytes');
  });
});

describe('checkImages', () => {
  async function imagesOf(bytes: Buffer) {
    const archive = await BatchArchive.open(fileOf(bytes));
    try {
      const plan = planIndex((await archive.read('index.csv', 1 << 20)).toString());
      if (!plan.ok) throw new Error(plan.reason);
      return await checkImages(archive, plan.envelopes);
    } finally {
      archive.close();
    }
  }

  it('records each TIFF with its digest and size', async () => {
    const checked = await imagesOf(await buildMailBatch(lines, { 'a.tif': await tiffImage({ width: 640, height: 280, text: '$10.00' }) }));
    expect(checked.get('a.tif')).toMatchObject({ width: 640, height: 280, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it('refuses a missing image, a PNG named .tif, and bytes that only start like a TIFF, naming the line', async () => {
    const two = [checkLine('E1', '10.00', 'a.tif'), checkLine('E2', '5.00', 'b.tif')];
    const tiff = await tiffImage({ text: 'ok' });
    await expect(imagesOf(await buildMailBatch(two, { 'a.tif': tiff }))).rejects.toMatchObject({
      line: 3,
      reason: 'the image "b.tif" is not in the archive',
    });
    const png = await (
      await import('sharp')
    )
      .default({ create: { width: 20, height: 20, channels: 3, background: '#fff' } })
      .png()
      .toBuffer();
    await expect(imagesOf(await buildMailBatch(two, { 'a.tif': png, 'b.tif': tiff }))).rejects.toMatchObject({
      line: 2,
      reason: 'the image "a.tif" is not a TIFF',
    });
    const fake = Buffer.concat([Buffer.from('II*\0'), Buffer.alloc(64, 7)]);
    await expect(imagesOf(await buildMailBatch(two, { 'a.tif': tiff, 'b.tif': fake }))).rejects.toMatchObject({
      line: 3,
      reason: 'the image "b.tif" is not a TIFF',
    });
  });
});
