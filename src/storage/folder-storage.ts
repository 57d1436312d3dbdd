import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { checkObjectKey, ObjectNotFound, ObjectTooLarge, type ObjectStorage } from './object-storage.js';

/** Signs the upload URLs of a folder storage: Almoner serves them itself (storage/upload-url.ts). */
export interface UploadUrlSigner {
  sign(key: string, expiresAt: Date): string;
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
    private readonly signer?: UploadUrlSigner,
  ) {}

  private pathOf(key: string): string {
    return path.join(this.root, checkObjectKey(key));
  }

  presignPut(key: string, expiresInSeconds: number): Promise<string> {
    if (!this.signer) throw new Error('this folder storage has no upload URL signer');
    checkObjectKey(key);
    return Promise.resolve(this.signer.sign(key, new Date(Date.now() + expiresInSeconds * 1000)));
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
    try {
      await pipeline(Buffer.isBuffer(body) ? Readable.from([body]) : body, counter, fs.createWriteStream(temporary, { flags: 'wx' }));
      await fsp.rename(temporary, target);
    } catch (error) {
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
