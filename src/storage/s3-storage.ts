import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { checkObjectKey, ObjectNotFound, ObjectTooLarge, type ObjectStorage } from './object-storage.js';

export interface S3StorageOptions {
  bucket: string;
  region: string;
  /** An S3-compatible service's endpoint; unset, AWS's own for the region. */
  endpoint?: string;
  forcePathStyle?: boolean;
  /** Unset: the AWS SDK's default credential chain (environment, profile, instance or task role). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** The deadline of a call without a large body (head, get's answer, delete); 30 s by default. */
  timeoutMs?: number;
  /** A put's deadline grows by a second per this many bytes beyond timeoutMs (1 MiB by default). */
  bytesPerSecond?: number;
  /** Where a stream of unknown length is spooled before its PutObject (os.tmpdir() by default). */
  spoolDir?: string;
}

/**
 * A failed S3 call, in words that carry no secret: the operation, the key, the service's error
 * name and status, never the SDK's request or response (a signature, a credential's id).
 */
export class S3StorageError extends Error {
  constructor(
    readonly operation: string,
    readonly key: string,
    readonly errorName: string,
    readonly httpStatus: number | undefined,
    message: string,
  ) {
    super(`s3 ${operation} ${key} failed: ${errorName}${httpStatus ? ` (HTTP ${httpStatus})` : ''}: ${message}`);
    this.name = 'S3StorageError';
  }
}

/**
 * Object storage in an S3 or S3-compatible bucket (docs/gift-processing.md, "Object storage").
 * Upload URLs are S3's own presigned PUTs; a lockbox provider's upload never passes through
 * Almoner. Every call has an overall deadline (an abort signal) beside the client's own
 * connection and request timeouts, so a silent service fails a call rather than hanging it.
 */
export class S3Storage implements ObjectStorage {
  readonly kind = 's3' as const;
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly timeoutMs: number;
  private readonly bytesPerSecond: number;
  private readonly spoolDir: string;

  constructor(options: S3StorageOptions) {
    this.bucket = options.bucket;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.bytesPerSecond = options.bytesPerSecond ?? 1024 * 1024;
    this.spoolDir = options.spoolDir ?? os.tmpdir();
    const config: S3ClientConfig = {
      region: options.region,
      forcePathStyle: options.forcePathStyle ?? false,
      // Checksums only where S3 requires them: S3-compatible services often refuse the SDK's
      // default trailing checksums, and a presigned URL then names no checksum the uploader must send.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 2,
      // requestTimeout: until the answer's headers; socketTimeout: a socket silent that long (a stalled body).
      requestHandler: {
        connectionTimeout: Math.min(this.timeoutMs, 10_000),
        requestTimeout: this.timeoutMs,
        socketTimeout: this.timeoutMs,
        throwOnRequestTimeout: true,
      },
    };
    if (options.endpoint) config.endpoint = options.endpoint;
    if (options.credentials) config.credentials = options.credentials;
    this.client = new S3Client(config);
  }

  /** Runs one call under a deadline; its errors in words without secrets. */
  private async call<T>(operation: string, key: string, deadlineMs: number, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error(`deadline of ${deadlineMs} ms passed`)), deadlineMs);
    try {
      return await run(controller.signal);
    } catch (error) {
      if (error instanceof ObjectNotFound || error instanceof ObjectTooLarge) throw error;
      if (controller.signal.aborted) throw new S3StorageError(operation, key, 'Timeout', undefined, `no answer within ${deadlineMs} ms`);
      if (error instanceof S3ServiceException) {
        throw new S3StorageError(operation, key, error.name, error.$metadata.httpStatusCode, error.message);
      }
      const { name, message } = error as Error;
      throw new S3StorageError(operation, key, name ?? 'Error', undefined, message ?? String(error));
    } finally {
      clearTimeout(timer);
    }
  }

  async presignPut(key: string, expiresInSeconds: number): Promise<string> {
    checkObjectKey(key);
    return getSignedUrl(this.client, new PutObjectCommand({ Bucket: this.bucket, Key: key }), { expiresIn: expiresInSeconds });
  }

  async put(key: string, body: Readable | Buffer, options: { contentType?: string; maxBytes?: number } = {}): Promise<{ size: number }> {
    checkObjectKey(key);
    const limit = options.maxBytes ?? Number.POSITIVE_INFINITY;
    if (Buffer.isBuffer(body)) {
      if (body.length > limit) throw new ObjectTooLarge(limit);
      await this.putObject(key, body, body.length, options.contentType);
      return { size: body.length };
    }
    // PutObject needs the length before the bytes: a stream is spooled to a file first, counting
    // (memory stays bounded; a stream past maxBytes stops there and nothing is sent).
    await fsp.mkdir(this.spoolDir, { recursive: true });
    const spool = path.join(this.spoolDir, `almoner-s3-${crypto.randomBytes(8).toString('hex')}.part`);
    let size = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        done(size > limit ? new ObjectTooLarge(limit) : null, chunk);
      },
    });
    try {
      await pipeline(body, counter, fs.createWriteStream(spool, { flags: 'wx', mode: 0o600 }));
      await this.putObject(key, fs.createReadStream(spool), size, options.contentType);
      return { size };
    } finally {
      await fsp.rm(spool, { force: true });
    }
  }

  private async putObject(key: string, body: Readable | Buffer, length: number, contentType?: string): Promise<void> {
    const deadline = this.timeoutMs + Math.ceil(length / this.bytesPerSecond) * 1000;
    await this.call('put', key, deadline, (abortSignal) =>
      this.client.send(
        new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentLength: length, ContentType: contentType }),
        // A large body takes longer to send than the client's requestTimeout allows a call.
        { abortSignal, requestTimeout: deadline },
      ),
    );
  }

  async get(key: string): Promise<Readable> {
    checkObjectKey(key);
    // The deadline covers the answer; the body then streams at the reader's pace (the client's
    // requestTimeout still ends a transfer that stalls).
    return this.call('get', key, this.timeoutMs, async (abortSignal) => {
      try {
        const answer = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }), { abortSignal });
        if (!(answer.Body instanceof Readable)) throw new Error('the answer has no body stream');
        return answer.Body;
      } catch (error) {
        if (error instanceof S3ServiceException && (error.name === 'NoSuchKey' || error.$metadata.httpStatusCode === 404)) {
          throw new ObjectNotFound(key);
        }
        throw error;
      }
    });
  }

  async head(key: string): Promise<{ size: number } | undefined> {
    checkObjectKey(key);
    return this.call('head', key, this.timeoutMs, async (abortSignal) => {
      try {
        const answer = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }), { abortSignal });
        return { size: answer.ContentLength ?? 0 };
      } catch (error) {
        // A missing key is 404 NotFound with s3:ListBucket, 403 without it (docs: the bucket's permissions).
        if (error instanceof S3ServiceException && (error.name === 'NotFound' || error.$metadata.httpStatusCode === 404)) return undefined;
        throw error;
      }
    });
  }

  async delete(key: string): Promise<void> {
    checkObjectKey(key);
    await this.call('delete', key, this.timeoutMs, (abortSignal) =>
      this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }), { abortSignal }),
    );
  }

  /** Closes the client's sockets (shutdown, tests). */
  destroy(): void {
    this.client.destroy();
  }
}
