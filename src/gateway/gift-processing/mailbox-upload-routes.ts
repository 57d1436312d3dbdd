import type { Middleware } from 'koa';
import type { Db } from '../../db/database.js';
import { receiveBatchUpload } from '../../gift-processing/upload-service.js';
import { DomainError, forbidden, notFound } from '../../errors/domain-error.js';
import { FolderStorage } from '../../storage/folder-storage.js';
import type { ObjectStorage } from '../../storage/object-storage.js';
import { UPLOAD_PATH_PREFIX, UploadSigner } from '../../storage/upload-signing.js';
import { environmentOf } from '../routing/environment.js';

/**
 * The folder storage's upload route on the API hosts (docs/gift-processing.md, "Object
 * storage"): `PUT /v1/mailbox/uploads/<batch_id>?expires=…&signature=…`. Outside the published
 * operations: the signed URL is the credential (no API key, no Api-Version), and the body
 * streams into storage, never read whole.
 */

const PATH = new RegExp(`^${UPLOAD_PATH_PREFIX}(batch_[0-9a-z]{26})$`);

export interface MailboxUploadDeps {
  db: Db;
  storage: ObjectStorage;
  maxBytes: number;
}

/** Whether a request is for this route: the gateway hands it over before its own auth and body parsing. */
export function isMailboxUpload(path: string): boolean {
  return path.startsWith(UPLOAD_PATH_PREFIX);
}

const WHY: Record<'expired' | 'signature', string> = {
  expired: 'This upload URL has expired: ask for a new one (POST /v1/mailbox/upload_url).',
  signature: 'This upload URL is not valid: its signature does not match. Use the URL exactly as POST /v1/mailbox/upload_url gave it.',
};

export function mailboxUploadRoute(deps: MailboxUploadDeps): Middleware {
  const route = receive(deps);
  return async (ctx, next) => {
    try {
      await route(ctx, next);
    } catch (error) {
      // Refused before its body was read whole (403, 409, 413): close rather than let Node
      // read and discard up to mail_batch_max_bytes to keep the connection.
      if (!ctx.req.complete) ctx.set('Connection', 'close');
      throw error;
    }
  };
}

function receive(deps: MailboxUploadDeps): Middleware {
  return async (ctx) => {
    const batchId = PATH.exec(ctx.path)?.[1];
    // Only a folder storage's URLs point here; with a bucket, uploads go to the bucket.
    const signer = deps.storage instanceof FolderStorage ? deps.storage.signer : undefined;
    if (!batchId || !(signer instanceof UploadSigner)) throw notFound(`There is nothing at ${ctx.path}.`);
    if (ctx.method !== 'PUT') throw new DomainError('method_not_allowed', 'Upload the batch with PUT.', { headers: { Allow: 'PUT' } });
    const check = signer.verify('PUT', ctx.path, ctx.query.expires, ctx.query.signature);
    if (!check.ok) throw forbidden(WHY[check.reason], { extensions: { reason: check.reason } });
    const declared = ctx.get('content-length');
    const uploaded = await receiveBatchUpload(deps.db, deps.storage, {
      batchId,
      environment: environmentOf(ctx),
      body: ctx.req,
      contentLength: /^\d+$/.test(declared) ? Number(declared) : undefined,
      maxBytes: deps.maxBytes,
    });
    ctx.status = 200;
    ctx.body = { batch_id: uploaded.batchId, status: 'uploaded', size_bytes: uploaded.sizeBytes };
  };
}
