import crypto from 'node:crypto';
import type { Environment } from '../db/schema.js';
import type { KeyedHasher } from '../keys/server-keys.js';
import type { UploadUrlSigner } from './folder-storage.js';

/**
 * Almoner's own signed upload URLs, for the folder storage (docs/gift-processing.md, "Object
 * storage"): `<API origin>/v1/mailbox/uploads/<batch_id>?expires=<unix seconds>&signature=<mac>`.
 * The mac is a base64url HMAC-SHA-256 over the method, the path and the expiry, under the
 * rotating hashing key's `upload_url` purpose key (keys/server-keys.ts): a URL signed just before
 * a rotation keeps working, since verification tries every version still live for the purpose.
 */

/** The longest an upload URL may live (the hashing key's `upload_url` life after retirement). */
export const MAX_UPLOAD_URL_SECONDS = 3600;

/** Where uploads are PUT on the API hosts; the rest of the path is the batch id. */
export const UPLOAD_PATH_PREFIX = '/v1/mailbox/uploads/';

/** The object key of a batch's upload, and the only keys the folder storage's URLs are made for. */
const BATCH_KEY = /^batches\/(batch_[0-9a-z]{26})\.zip$/;

/** The key a mail batch's ZIP is stored at. */
export function batchStorageKey(batchId: string): string {
  return `batches/${batchId}.zip`;
}

export type UploadUrlCheck = { ok: true } | { ok: false; reason: 'expired' | 'signature' };

export class UploadSigner implements UploadUrlSigner {
  constructor(
    private readonly keys: KeyedHasher,
    /** The API origin of each environment (base_url, sandbox_base_url). */
    private readonly origins: Readonly<Record<Environment, string>>,
  ) {}

  private static message(method: string, path: string, expires: number): string {
    return `${method.toUpperCase()}\n${path}\n${expires}`;
  }

  /** The mac alone, without the key version keyedHash puts before it ("<kid>.<mac>"). */
  private static mac(keyedHash: string): string {
    return keyedHash.slice(keyedHash.indexOf('.') + 1);
  }

  sign(key: string, expiresAt: Date, environment: Environment): string {
    const batchId = BATCH_KEY.exec(key)?.[1];
    if (!batchId) throw new Error(`upload URLs are made for batch keys (batches/<batch_id>.zip), not ${JSON.stringify(key)}`);
    const expires = Math.ceil(expiresAt.getTime() / 1000);
    if (expires - Date.now() / 1000 > MAX_UPLOAD_URL_SECONDS) throw new Error(`an upload URL lives ${MAX_UPLOAD_URL_SECONDS} s at most`);
    const path = `${UPLOAD_PATH_PREFIX}${batchId}`;
    const signature = UploadSigner.mac(this.keys.keyedHash('upload_url', UploadSigner.message('PUT', path, expires)));
    return `${this.origins[environment]}${path}?expires=${expires}&signature=${signature}`;
  }

  /**
   * Judges a request's `expires` and `signature` for its method and path: the signature first
   * (an expiry nobody signed is a bad signature, not an expired URL), compared in constant time.
   */
  verify(method: string, path: string, expires: unknown, signature: unknown, now: number = Date.now()): UploadUrlCheck {
    if (typeof expires !== 'string' || !/^\d{1,12}$/.test(expires) || typeof signature !== 'string') {
      return { ok: false, reason: 'signature' };
    }
    const given = Buffer.from(signature, 'utf8');
    const expected = this.keys
      .keyedHashes('upload_url', UploadSigner.message(method, path, Number(expires)))
      .map((hash) => Buffer.from(UploadSigner.mac(hash), 'utf8'));
    // Every live version is compared, whichever matches, so the time taken does not say which.
    let matched = false;
    for (const candidate of expected) {
      if (candidate.length === given.length && crypto.timingSafeEqual(candidate, given)) matched = true;
    }
    if (!matched) return { ok: false, reason: 'signature' };
    if (Number(expires) * 1000 <= now) return { ok: false, reason: 'expired' };
    return { ok: true };
  }
}
