import crypto from 'node:crypto';
import sharp, { type Metadata } from 'sharp';
import { BatchRefusal, type BatchArchive } from './batch-archive.js';
import type { PlannedEnvelope } from './batch-index.js';

/** One image of the batch as checked: its entry, where it goes in storage, its digest and size. */
export interface CheckedImage {
  path: string;
  sha256: string;
  width: number;
  height: number;
}

/** The largest image entry read (a scan is a few MiB at most; the whole batch is bounded apart). */
export const MAX_IMAGE_BYTES = 64 * 1024 * 1024;

function isTiffMagic(bytes: Buffer): boolean {
  const head = bytes.subarray(0, 4).toString('hex');
  return head === '49492a00' || head === '4d4d002a';
}

/**
 * Checks every image the index names (docs/gift-processing.md, "What a batch becomes"): in the
 * ZIP, and a TIFF by its magic bytes and by what sharp reads of it. The first failure refuses
 * the batch, naming the line. Each distinct entry is read once; nothing is kept but digests.
 */
export async function checkImages(archive: BatchArchive, envelopes: readonly PlannedEnvelope[]): Promise<Map<string, CheckedImage>> {
  const checked = new Map<string, CheckedImage>();
  for (const envelope of envelopes) {
    for (const image of envelope.images) {
      if (checked.has(image.path)) continue;
      if (!archive.has(image.path)) throw new BatchRefusal(`the image ${JSON.stringify(image.path)} is not in the archive`, image.line);
      let bytes: Buffer;
      try {
        bytes = await archive.read(image.path, MAX_IMAGE_BYTES);
      } catch (error) {
        if (error instanceof BatchRefusal) throw new BatchRefusal(error.reason, image.line);
        throw error;
      }
      const notTiff = new BatchRefusal(`the image ${JSON.stringify(image.path)} is not a TIFF`, image.line);
      if (!isTiffMagic(bytes)) throw notTiff;
      let metadata: Metadata;
      try {
        metadata = await sharp(bytes).metadata();
      } catch {
        throw notTiff;
      }
      if (metadata.format !== 'tiff' || !metadata.width || !metadata.height) throw notTiff;
      checked.set(image.path, {
        path: image.path,
        sha256: crypto.createHash('sha256').update(bytes).digest('hex'),
        width: metadata.width,
        height: metadata.height,
      });
    }
  }
  return checked;
}

/** A scan's digest: SHA-256 over its images' SHA-256, in order (the same images again are not a new scan). */
export function scanDigest(imageDigests: readonly string[]): string {
  const hash = crypto.createHash('sha256');
  for (const digest of imageDigests) hash.update(digest);
  return hash.digest('hex');
}
