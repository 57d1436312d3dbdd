import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import { once } from 'node:events';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Environment } from '../db/schema.js';
import { checkObjectKey, ObjectNotFound, ObjectTooLarge, type ObjectStorage } from './object-storage.js';

/**
 * Signs the upload URLs of a folder storage, which Almoner serves itself on its API hosts
 * (storage/upload-signing.ts, UploadSigner; docs/gift-processing.md, "Object storage").
 */
export interface UploadUrlSigner {
  /** The URL a holder may PUT `key`'s bytes to until `expiresAt`, on `environment`'s API host. */
  sign(key: string, expiresAt: Date, environment: Environment): string;
}

/**
 * The default object storage: files under a folder of the data directory. A put writes a
 * temporary file beside its target and renames it over, so a reader never sees half an object
 * and a failed or oversized upload leaves nothing.
 */
export class FolderStorage implements ObjectStorage {
  readonly kind = 'folder' as const;

  constructor(
    readonly root: string,
    /** Absent: the storage makes no upload URLs (a tool that only reads and writes objects). */
    readonly signer?: UploadUrlSigner,
  ) {}

  private pathOf(key: string): string {
    return path.join(this.root, checkObjectKey(key));
  }

  async presignPut(key: string, expiresInSeconds: number, options: { environment?: Environment } = {}): Promise<string> {
    if (!this.signer) throw new Error('this folder storage has no upload URL signer');
    // Its URLs are on an API host of Almoner's own: which one, the caller says.
    if (!options.environment) throw new Error("a folder storage's upload URL needs the environment whose API host serves it");
    checkObjectKey(key);
    const expiresAt = new Date(Date.now() + expiresInSeconds * 1000);
    return this.signer.sign(key, expiresAt, options.environment);
  }

  async put(key: string, body: Readable | Buffer, options: { maxBytes?: number } = {}): Promise<{ size: number }> {
    const target = this.pathOf(key);
    await fsp.mkdir(path.dirname(target), { recursive: true });
    const temporary = `${target}.${crypto.randomBytes(6).toString('hex')}.part`;
    let size = 0;
    const limit = options.maxBytes ?? Number.POSITIVE_INFINITY;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        done(size > limit ? new ObjectTooLarge(limit) : null, chunk);
      },
    });
    // Opened before the pipeline: a stream's own lazy open could create the file after a failure's removal below.
    const handle = await fsp.open(temporary, 'wx');
    const sink = handle.createWriteStream();
    try {
      await pipeline(Buffer.isBuffer(body) ? Readable.from([body]) : body, counter, sink);
      await fsp.rename(temporary, target);
    } catch (error) {
      if (!sink.closed) await once(sink, 'close').catch(() => undefined);
      await fsp.rm(temporary, { force: true });
      throw error;
    }
    return { size };
  }

  async get(key: string): Promise<Readable> {
    const file = this.pathOf(key);
    try {
      const handle = await fsp.open(file, 'r');
      return handle.createReadStream();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ObjectNotFound(key);
      throw error;
    }
  }

  async head(key: string): Promise<{ size: number } | undefined> {
    try {
      const stat = await fsp.stat(this.pathOf(key));
      return stat.isFile() ? { size: stat.size } : undefined;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await fsp.rm(this.pathOf(key), { force: true });
  }
}
