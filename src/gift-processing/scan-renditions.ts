import type { Readable } from 'node:stream';
import sharp from 'sharp';
import { ObjectNotFound, type ObjectStorage } from '../storage/object-storage.js';

/**
 * Web renditions of scan images (docs/gift-processing.md, "On the dashboard"): the TIFF a
 * batch stored, converted once to WebP at a bounded size and kept beside it in the storage
 * under `renditions/<image_id>/<size>.webp`, so later requests only read it back.
 */

export const RENDITION_SIZES = { full: 2000, thumb: 240 } as const;
export type RenditionSize = keyof typeof RENDITION_SIZES;

export function isRenditionSize(value: unknown): value is RenditionSize {
  return value === 'full' || value === 'thumb';
}

/** A scan larger than this many pixels is not decoded (a crafted TIFF could claim billions). */
export const MAX_SCAN_PIXELS = 60_000_000;
/** Nor one whose file is larger than this. */
export const MAX_SCAN_BYTES = 64 * 1024 * 1024;

/** A scan image that could not be turned into a rendition: missing, too large, or not a readable TIFF. */
export class ScanUnreadable extends Error {
  constructor(
    readonly imageId: string,
    reason: string,
  ) {
    super(`scan image ${imageId} cannot be shown: ${reason}`);
    this.name = 'ScanUnreadable';
  }
}

export function renditionKey(imageId: string, size: RenditionSize): string {
  return `renditions/${imageId}/${size}.webp`;
}

async function readAll(stream: Readable, maxBytes: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      stream.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function readObject(storage: ObjectStorage, key: string, maxBytes: number): Promise<Buffer | undefined> {
  try {
    return await readAll(await storage.get(key), maxBytes);
  } catch (error) {
    if (error instanceof ObjectNotFound) return undefined;
    throw error;
  }
}

/** Decodes a TIFF and encodes its rendition: at most `width` pixels wide, never enlarged. */
async function render(tiff: Buffer, size: RenditionSize): Promise<Buffer> {
  return sharp(tiff, { limitInputPixels: MAX_SCAN_PIXELS, failOn: 'error', sequentialRead: true })
    .rotate()
    .resize({ width: RENDITION_SIZES[size], withoutEnlargement: true })
    .webp({ quality: size === 'thumb' ? 70 : 82 })
    .toBuffer();
}

/** At most this many scans are decoded at once per process: each holds its TIFF (up to MAX_SCAN_BYTES) in memory. */
const MAX_CONCURRENT_RENDERS = 2;
let rendering = 0;
const waiting: (() => void)[] = [];

async function withRenderSlot<T>(work: () => Promise<T>): Promise<T> {
  if (rendering >= MAX_CONCURRENT_RENDERS) await new Promise<void>((resolve) => waiting.push(resolve));
  else rendering += 1;
  try {
    return await work();
  } finally {
    // The slot passes straight to the next in line, or is freed.
    const next = waiting.shift();
    if (next) next();
    else rendering -= 1;
  }
}

/** Renditions being made now, by key: a page's several requests for one image decode it once. */
const inFlight = new Map<string, Promise<Buffer>>();

async function make(storage: ObjectStorage, image: { id: string; storage_key: string }, size: RenditionSize, key: string): Promise<Buffer> {
  return withRenderSlot(async () => {
    // Made meanwhile by another process: read it back.
    const kept = await readObject(storage, key, MAX_SCAN_BYTES);
    if (kept) return kept;
    const tiff = await readObject(storage, image.storage_key, MAX_SCAN_BYTES);
    if (!tiff) throw new ScanUnreadable(image.id, 'the file is missing or too large');
    let body: Buffer;
    try {
      body = await render(tiff, size);
    } catch (error) {
      throw new ScanUnreadable(image.id, (error as Error).message);
    }
    await storage.put(key, body, { contentType: 'image/webp' });
    return body;
  });
}

/**
 * The WebP rendition of a scan image at `size`: the stored one when there is one, else made
 * from the TIFF and stored. ScanUnreadable when the TIFF is missing, too large or undecodable.
 */
export async function scanRendition(
  storage: ObjectStorage,
  image: { id: string; storage_key: string },
  size: RenditionSize,
): Promise<{ body: Buffer; cached: boolean }> {
  const key = renditionKey(image.id, size);
  const kept = await readObject(storage, key, MAX_SCAN_BYTES);
  if (kept) return { body: kept, cached: true };
  let pending = inFlight.get(key);
  if (!pending) {
    pending = make(storage, image, size, key).finally(() => inFlight.delete(key));
    inFlight.set(key, pending);
  }
  return { body: await pending, cached: false };
}
