import type { Readable } from 'node:stream';
import type { Environment } from '../db/schema.js';

/**
 * Object storage (docs/gift-processing.md, "Object storage"): where mail batches land and
 * where scans and their web renditions are kept. Two implementations: a folder under the data
 * directory (the default: Almoner serves its signed upload URLs itself) and an S3-compatible
 * bucket (production). Keys are relative paths of [0-9A-Za-z._/-] segments, never `..`.
 */
export interface ObjectStorage {
  /** What it is, for logs and the docs: `folder` or `s3`. */
  readonly kind: 'folder' | 's3';
  /**
   * A URL the holder may PUT the object's bytes to, once, until `expiresInSeconds` from now;
   * nothing else (another key, a later time, a changed signature) is accepted. `environment`
   * picks the API host of a folder storage's URLs (the production or the sandbox API); a
   * bucket's presigned URLs are the same for both.
   */
  presignPut(key: string, expiresInSeconds: number, options?: { environment?: Environment }): Promise<string>;
  /** Stores a whole object, streaming: memory stays bounded whatever the size. */
  put(key: string, body: Readable | Buffer, options?: { contentType?: string; maxBytes?: number }): Promise<{ size: number }>;
  /** The object's bytes as a stream; ObjectNotFound when there is none. */
  get(key: string): Promise<Readable>;
  /** The object's size, or undefined when there is none. */
  head(key: string): Promise<{ size: number } | undefined>;
  /** Removes the object; no error when there is none. */
  delete(key: string): Promise<void>;
}

export class ObjectNotFound extends Error {
  constructor(readonly key: string) {
    super(`no object at ${key}`);
    this.name = 'ObjectNotFound';
  }
}

/** A body longer than `maxBytes`: nothing is kept. */
export class ObjectTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`the object is larger than ${maxBytes} bytes`);
    this.name = 'ObjectTooLarge';
  }
}

const KEY = /^[0-9A-Za-z_-][0-9A-Za-z._-]{0,127}(\/[0-9A-Za-z_-][0-9A-Za-z._-]{0,127}){0,7}$/;

/** Refuses a key that could leave its folder or bucket prefix (`..`, absolute, odd characters). */
export function checkObjectKey(key: string): string {
  if (!KEY.test(key) || key.split('/').some((part) => part === '.' || part === '..')) {
    throw new Error(`invalid object key ${JSON.stringify(key)}`);
  }
  return key;
}
