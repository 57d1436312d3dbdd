import type { Readable } from 'node:stream';
import type { Db } from '../db/database.js';
import { prefixedId } from '../db/ids.js';
import type { Environment } from '../db/schema.js';
import { conflict, DomainError, invalid, notFound } from '../errors/domain-error.js';
import { ObjectTooLarge, type ObjectStorage } from '../storage/object-storage.js';
import { batchStorageKey } from '../storage/upload-signing.js';
import {
  claimBatchUpload,
  findMailBatch,
  findProviderLockbox,
  insertMailBatch,
  markBatchUploaded,
  releaseBatchUpload,
} from './upload-repository.js';

/**
 * A lockbox provider's uploads (docs/gift-processing.md, "Object storage"): the URL it asks
 * for makes an awaiting mail batch, and the bytes PUT to it (straight to the bucket, or through
 * Almoner's own upload route for the folder storage) make the batch `uploaded`.
 */

/** How long an upload URL works: the published 15 minutes. */
export const UPLOAD_URL_SECONDS = 15 * 60;

/** mail_batch_max_bytes' default: 512 MiB (docs/gift-processing.md, "The batch format"). */
export const DEFAULT_MAIL_BATCH_MAX_BYTES = 512 * 1024 * 1024;

/** How long one upload through Almoner holds its batch (a slow 512 MiB body): past it, a crashed upload frees the batch. */
const UPLOAD_CLAIM_SECONDS = 60 * 60;

export interface UploadUrl {
  url: string;
  batchId: string;
  expiresAt: Date;
}

/** Makes an awaiting batch for the provider's lockbox at `locationId`, and the URL its ZIP is PUT to. */
export async function createBatchUploadUrl(
  db: Db,
  storage: ObjectStorage,
  request: { providerId: string; environment: Environment; locationId: string },
): Promise<UploadUrl> {
  const lockbox = await findProviderLockbox(db, request.providerId, request.environment, request.locationId);
  if (!lockbox) {
    // The published operation lists no 404: an unknown location is a bad location_id.
    throw invalid(
      `Invalid body: location_id: ${request.locationId} is not one of your lockboxes in the ${request.environment} environment.`,
    );
  }
  const batchId = prefixedId('batch');
  const key = batchStorageKey(batchId);
  const expiresAt = new Date(Date.now() + UPLOAD_URL_SECONDS * 1000);
  // The URL first: a batch row never exists without one.
  const url = await storage.presignPut(key, UPLOAD_URL_SECONDS, { environment: request.environment });
  await insertMailBatch(db, {
    id: batchId,
    environment: request.environment,
    providerId: request.providerId,
    lockboxId: lockbox.id,
    storageKey: key,
    uploadExpiresAt: expiresAt,
  });
  return { url, batchId, expiresAt };
}

export interface ReceivedUpload {
  batchId: string;
  sizeBytes: number;
}

/**
 * Streams an upload into storage for an awaiting batch, then marks it `uploaded`. The URL's
 * signature and expiry are judged before (the route). Nothing is kept of a body larger than
 * `maxBytes` (413) or shorter than its Content-Length (400); a batch that is not awaiting an
 * upload, or is being uploaded by another request, is a 409.
 */
export async function receiveBatchUpload(
  db: Db,
  storage: ObjectStorage,
  upload: { batchId: string; environment: Environment; body: Readable; contentLength: number | undefined; maxBytes: number },
): Promise<ReceivedUpload> {
  const batch = await findMailBatch(db, upload.batchId);
  if (!batch || batch.environment !== upload.environment) throw notFound(`There is no mail batch ${upload.batchId} in this environment.`);
  if (batch.status !== 'awaiting_upload') throw conflict(`Mail batch ${batch.id} is ${batch.status}: a batch is uploaded once.`);
  const tooLarge = () =>
    new DomainError('too_large', `The batch is larger than ${upload.maxBytes} bytes (mail_batch_max_bytes); nothing was kept.`);
  if (upload.contentLength !== undefined && upload.contentLength > upload.maxBytes) throw tooLarge();
  if (!(await claimBatchUpload(db, batch.id, new Date(Date.now() + UPLOAD_CLAIM_SECONDS * 1000)))) {
    throw conflict(`Mail batch ${batch.id} is being uploaded by another request.`);
  }
  let size: number;
  try {
    ({ size } = await storage.put(batch.storage_key, upload.body, { maxBytes: upload.maxBytes, contentType: 'application/zip' }));
    if (upload.contentLength !== undefined && size !== upload.contentLength) {
      await storage.delete(batch.storage_key);
      throw invalid(`The body has ${size} bytes and its Content-Length says ${upload.contentLength}; nothing was kept.`);
    }
  } catch (error) {
    await releaseBatchUpload(db, batch.id);
    if (error instanceof ObjectTooLarge) throw tooLarge();
    // The caller hung up or the body stopped short of its Content-Length: the storage kept nothing.
    if (upload.body.readableAborted) throw invalid('The body ended before its Content-Length; nothing was kept.');
    throw error;
  }
  if (!(await markBatchUploaded(db, batch.id, size))) {
    // The ingestion job got to the batch first: it noticed the stored object (it heads awaiting
    // batches), and the batch is uploaded with these bytes, since this request held it; or it
    // gave the batch up as expired meanwhile, and then nothing of the upload is kept.
    const now = await findMailBatch(db, batch.id);
    if (now?.status === 'expired') {
      await storage.delete(batch.storage_key);
      throw conflict(`Mail batch ${batch.id} expired before its upload ended; nothing was kept. Ask for a new upload URL.`);
    }
  }
  return { batchId: batch.id, sizeBytes: size };
}
