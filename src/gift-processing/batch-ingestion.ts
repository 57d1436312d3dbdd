import { isUniqueViolationOf } from '../errors/unique-violation.js';
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Db } from '../db/database.js';
import type { ObjectStorage } from '../storage/object-storage.js';
import { BatchArchive, BatchRefusal } from './batch-archive.js';
import { checkImages, type CheckedImage } from './batch-images.js';
import { planIndex, type PlannedEnvelope } from './batch-index.js';
import { writeBatch, type StoredImage, type WriteSummary } from './batch-writer.js';
import { findIngestedWithContent, findLockboxForIngestion, finishBatch, type ClaimedBatch } from './mail-batches-repository.js';

/** The largest batch read (mail_batch_max_bytes' default: docs/gift-processing.md, "The batch format"). */
export const MAX_BATCH_BYTES = 512 * 1024 * 1024;
/** The largest index.csv read. */
export const MAX_INDEX_BYTES = 32 * 1024 * 1024;

export interface IngestionDeps {
  db: Db;
  storage: ObjectStorage;
  now: () => Date;
  maxBatchBytes?: number;
}

export type IngestionOutcome =
  | ({ status: 'ingested'; sha256: string } & WriteSummary)
  | { status: 'refused'; line: number | null; reason: string }
  | { status: 'duplicate'; sha256: string }
  /** Another ingestor took the batch over after this claim's lease ran out: this one wrote nothing. */
  | { status: 'superseded' };

/** Thrown inside the writing transaction when the claim is no longer the batch's: rolls it back. */
class Superseded extends Error {}

/**
 * The key of a batch's image, per try: a try that fails, or finds itself superseded, removes only
 * its own copies, never those of a later try that took the batch over.
 */
export function scanImageKey(batchId: string, attempt: number, position: number): string {
  return `scans/${batchId}/${attempt}/${position}.tiff`;
}

/** Streams the object to a temporary file (memory stays bounded), hashing it on the way. */
async function download(storage: ObjectStorage, key: string, file: string, maxBytes: number): Promise<{ sha256: string; size: number }> {
  const hash = crypto.createHash('sha256');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > maxBytes) return done(new BatchRefusal(`the upload is larger than ${maxBytes} bytes`));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  await pipeline(await storage.get(key), meter, fs.createWriteStream(file, { flags: 'wx' }));
  return { sha256: hash.digest('hex'), size };
}

/** Archive, index and images judged whole, before anything is written. */
async function validate(archive: BatchArchive): Promise<{ envelopes: PlannedEnvelope[]; images: Map<string, CheckedImage> }> {
  if (!archive.has('index.csv')) throw new BatchRefusal('the archive has no index.csv at its root');
  const bytes = await archive.read('index.csv', MAX_INDEX_BYTES);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new BatchRefusal('the index is not UTF-8');
  }
  const plan = planIndex(text);
  if (!plan.ok) throw new BatchRefusal(plan.reason, plan.line);
  return { envelopes: plan.envelopes, images: await checkImages(archive, plan.envelopes) };
}

/** Every image reference of the plan, in order, at its batch position's key. */
async function storeImages(
  storage: ObjectStorage,
  archive: BatchArchive,
  batchId: string,
  attempt: number,
  envelopes: readonly PlannedEnvelope[],
  checked: Map<string, CheckedImage>,
  stored: StoredImage[][],
): Promise<void> {
  let position = 0;
  for (const envelope of envelopes) {
    const images: StoredImage[] = [];
    stored.push(images);
    for (const image of envelope.images) {
      const key = scanImageKey(batchId, attempt, position++);
      await storage.put(key, await archive.stream(image.path), { contentType: 'image/tiff' });
      images.push({ ...checked.get(image.path)!, key, label: image.label });
    }
  }
}

async function deleteAll(storage: ObjectStorage, keys: readonly string[]): Promise<void> {
  await Promise.all(keys.map((key) => storage.delete(key).catch(() => undefined)));
}

function isContentConflict(error: unknown): boolean {
  return isUniqueViolationOf(error, 'mail_batches_content_key');
}

/**
 * Ingests one claimed batch (docs/gift-processing.md, "Ingestion"): download, duplicate check,
 * validation of everything, the images into storage, then one transaction of every row, fenced
 * to this claim. A refusal records its line and reason and keeps nothing; any other error is
 * thrown for the ingestor to retry, after the images this try stored are removed.
 */
export async function ingestBatch(deps: IngestionDeps, claim: ClaimedBatch): Promise<IngestionOutcome> {
  const { db, storage } = deps;
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'almoner-batch-'));
  const stored: StoredImage[][] = [];
  let archive: BatchArchive | undefined;
  let content: { sha256: string; size: number } | undefined;
  try {
    content = await download(storage, claim.storage_key, path.join(dir, 'batch.zip'), deps.maxBatchBytes ?? MAX_BATCH_BYTES);
    const sha256 = content.sha256;
    if (await findIngestedWithContent(db, claim.lockbox_id, sha256, claim.id)) {
      return (await finishBatch(db, claim, { status: 'duplicate', sha256, sizeBytes: content.size }, deps.now()))
        ? { status: 'duplicate', sha256 }
        : { status: 'superseded' };
    }
    archive = await BatchArchive.open(path.join(dir, 'batch.zip'));
    const { envelopes, images } = await validate(archive);
    const lockbox = await findLockboxForIngestion(db, claim.lockbox_id);
    await storeImages(storage, archive, claim.id, claim.attempts, envelopes, images, stored);
    const summary = await writeBatch(db, { claim, lockbox, envelopes, images: stored, now: deps.now() }, async (trx) => {
      const owned = await finishBatch(trx, claim, { status: 'ingested', sha256, sizeBytes: content!.size }, deps.now());
      if (!owned) throw new Superseded();
    });
    await deleteAll(storage, summary.unusedKeys);
    return { status: 'ingested', sha256, ...summary };
  } catch (error) {
    // This try's own copies only (scanImageKey): a later try's stay.
    const keys = stored.flat().map((image) => image.key);
    if (error instanceof Superseded) {
      await deleteAll(storage, keys);
      return { status: 'superseded' };
    }
    if (isContentConflict(error) && content) {
      // The same content committed by another batch meanwhile: this one is its duplicate.
      await deleteAll(storage, keys);
      const done = await finishBatch(db, claim, { status: 'duplicate', sha256: content.sha256, sizeBytes: content.size }, deps.now());
      return done ? { status: 'duplicate', sha256: content.sha256 } : { status: 'superseded' };
    }
    await deleteAll(storage, keys);
    if (!(error instanceof BatchRefusal)) throw error;
    const refused = await finishBatch(
      db,
      claim,
      { status: 'refused', sha256: content?.sha256, sizeBytes: content?.size, refusalLine: error.line, refusalReason: error.reason },
      deps.now(),
    );
    return refused ? { status: 'refused', line: error.line, reason: error.reason } : { status: 'superseded' };
  } finally {
    archive?.close();
    await fsp.rm(dir, { recursive: true, force: true });
  }
}
