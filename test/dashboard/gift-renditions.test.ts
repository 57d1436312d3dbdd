import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { renditionKey, scanRendition, ScanUnreadable } from '../../src/gift-processing/scan-renditions.js';
import { FolderStorage } from '../../src/storage/folder-storage.js';
import { checkTiff, hugeTiffHeader } from '../helpers/gift-dashboard.js';
import { tempDir } from '../helpers/temp-dirs.js';

/**
 * Scan renditions (docs/gift-processing.md, "How scans are shown"): a TIFF in a folder storage
 * becomes a bounded WebP, made once however many ask at the same time, then read back.
 */

/** A folder storage that counts the reads of each key. */
class CountingStorage extends FolderStorage {
  readonly reads = new Map<string, number>();
  override get(key: string) {
    this.reads.set(key, (this.reads.get(key) ?? 0) + 1);
    return super.get(key);
  }
}

describe('scanRendition', () => {
  it('makes a 240 px thumbnail once for concurrent requests, keeps it, and reads it back afterwards', async () => {
    const storage = new CountingStorage(tempDir('almoner-renditions-'));
    await storage.put('scans/a.tif', await checkTiff('$12.00'));
    const image = { id: 'image_01m8kwaaaaaaaaaaaaaaaaaaaa', storage_key: 'scans/a.tif' };
    const answers = await Promise.all(Array.from({ length: 5 }, () => scanRendition(storage, image, 'thumb')));
    expect(storage.reads.get('scans/a.tif')).toBe(1);
    expect(new Set(answers.map((a) => a.body.toString('base64'))).size).toBe(1);
    expect(await sharp(answers[0]!.body).metadata()).toMatchObject({ format: 'webp', width: 240 });
    expect(await storage.head(renditionKey(image.id, 'thumb'))).toBeDefined();
    const again = await scanRendition(storage, image, 'thumb');
    expect(again.cached).toBe(true);
    expect(storage.reads.get('scans/a.tif')).toBe(1);
    // A small scan is never enlarged.
    const full = await scanRendition(storage, image, 'full');
    expect(await sharp(full.body).metadata()).toMatchObject({ width: 1200 });
  });

  it('refuses a missing, undecodable or oversized TIFF with ScanUnreadable and keeps nothing', async () => {
    const storage = new FolderStorage(tempDir('almoner-renditions-'));
    await storage.put('scans/bad.tif', Buffer.from('II*\0not a tiff at all'));
    await storage.put('scans/bomb.tif', hugeTiffHeader());
    for (const [i, key] of ['scans/none.tif', 'scans/bad.tif', 'scans/bomb.tif'].entries()) {
      const image = { id: `image_01m8kw${i}bbbbbbbbbbbbbbbbbbb`, storage_key: key };
      await expect(scanRendition(storage, image, 'full')).rejects.toBeInstanceOf(ScanUnreadable);
      expect(await storage.head(renditionKey(image.id, 'full'))).toBeUndefined();
    }
  });
});
