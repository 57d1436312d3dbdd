import net from 'node:net';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectNotFound, ObjectTooLarge } from '../../src/storage/object-storage.js';
import { S3Storage, S3StorageError } from '../../src/storage/s3-storage.js';
import { startTestS3Server, TEST_BUCKET, TEST_CREDENTIALS, TEST_REGION, type TestS3Server } from '../helpers/s3-server.js';

/** The S3 storage against a real S3-protocol server (s3rver behind a SigV4-checking proxy: test/helpers/s3-server.ts). */

let server: TestS3Server;
let storage: S3Storage;

beforeAll(async () => {
  server = await startTestS3Server();
  storage = new S3Storage({
    bucket: TEST_BUCKET,
    region: TEST_REGION,
    endpoint: server.endpoint,
    forcePathStyle: true,
    credentials: TEST_CREDENTIALS,
    timeoutMs: 5000,
  });
});

afterAll(async () => {
  storage?.destroy();
  await server?.close();
});

/** A raw HTTP request with a Content-Length of our choosing, whatever the body. */
function rawPut(url: string, declaredLength: number, body: Buffer): Promise<void> {
  const target = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(target.port), target.hostname, () => {
      socket.write(`PUT ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Length: ${declaredLength}\r\n\r\n`);
      socket.end(body);
    });
    socket.on('error', () => resolve());
    socket.on('close', () => resolve());
    socket.resume();
  });
}

describe('S3Storage', () => {
  it('makes presigned PUT URLs that store the object, then gets and heads it', async () => {
    const url = await storage.presignPut('batches/round-trip.zip', 900);
    expect(url).toMatch(/X-Amz-Signature=/);
    expect(url).toMatch(/X-Amz-Expires=900/);
    const answer = await fetch(url, { method: 'PUT', body: 'zip bytes' });
    expect(answer.status).toBe(200);
    expect(await storage.head('batches/round-trip.zip')).toEqual({ size: 9 });
    expect(await text(await storage.get('batches/round-trip.zip'))).toBe('zip bytes');
  });

  it('puts buffers and streams, deletes, and answers undefined or ObjectNotFound for a missing key', async () => {
    expect(await storage.put('scans/a.tif', Buffer.from('abc'))).toEqual({ size: 3 });
    const chunks = Array.from({ length: 32 }, (_, i) => Buffer.alloc(4096, i));
    expect(await storage.put('scans/b.tif', Readable.from(chunks))).toEqual({ size: 131_072 });
    expect(Buffer.from(await (await storage.get('scans/b.tif')).toArray().then((c) => Buffer.concat(c as Buffer[])))).toEqual(
      Buffer.concat(chunks),
    );
    await storage.delete('scans/a.tif');
    expect(await storage.head('scans/a.tif')).toBeUndefined();
    expect(await storage.head('never/there.zip')).toBeUndefined();
    await expect(storage.get('never/there.zip')).rejects.toBeInstanceOf(ObjectNotFound);
    await storage.delete('never/there.zip');
  });

  it('keeps nothing of a stream past maxBytes', async () => {
    const body = Readable.from(Array.from({ length: 8 }, () => Buffer.alloc(1024)));
    await expect(storage.put('scans/big.tif', body, { maxBytes: 4096 })).rejects.toBeInstanceOf(ObjectTooLarge);
    await expect(storage.put('scans/big2.tif', Buffer.alloc(4097), { maxBytes: 4096 })).rejects.toBeInstanceOf(ObjectTooLarge);
    expect(await storage.head('scans/big.tif')).toBeUndefined();
    expect(await storage.head('scans/big2.tif')).toBeUndefined();
  });

  it('refuses a presigned URL past its expiry (403)', async () => {
    const url = await storage.presignPut('batches/late.zip', 1);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const answer = await fetch(url, { method: 'PUT', body: 'late' });
    expect(answer.status).toBe(403);
    expect(await answer.text()).toMatch(/expired/);
    expect(await storage.head('batches/late.zip')).toBeUndefined();
  });

  it('refuses a tampered signature, another key or another method (403), storing nothing', async () => {
    const url = new URL(await storage.presignPut('batches/tamper.zip', 900));
    const signature = url.searchParams.get('X-Amz-Signature')!;
    url.searchParams.set('X-Amz-Signature', `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`);
    const tampered = await fetch(url, { method: 'PUT', body: 'evil' });
    expect(tampered.status).toBe(403);
    expect(await tampered.text()).toMatch(/SignatureDoesNotMatch/);
    const otherKey = new URL(await storage.presignPut('batches/tamper.zip', 900));
    otherKey.pathname = otherKey.pathname.replace('tamper.zip', 'other.zip');
    expect((await fetch(otherKey, { method: 'PUT', body: 'evil' })).status).toBe(403);
    const longer = new URL(await storage.presignPut('batches/tamper.zip', 900));
    longer.searchParams.set('X-Amz-Expires', '3600');
    expect((await fetch(longer, { method: 'PUT', body: 'evil' })).status).toBe(403);
    expect(await storage.head('batches/tamper.zip')).toBeUndefined();
    expect(await storage.head('batches/other.zip')).toBeUndefined();
  });

  it('stores nothing of an upload whose body stops short of its Content-Length', async () => {
    const url = await storage.presignPut('batches/short.zip', 900);
    await rawPut(url, 1000, Buffer.alloc(400, 7));
    expect(await storage.head('batches/short.zip')).toBeUndefined();
    // The same URL still works for a whole body.
    expect((await fetch(url, { method: 'PUT', body: Buffer.alloc(1000, 7) })).status).toBe(200);
    expect(await storage.head('batches/short.zip')).toEqual({ size: 1000 });
  });

  it('fails a call within its deadline when the service never answers', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as net.AddressInfo).port;
    const stuck = new S3Storage({
      bucket: TEST_BUCKET,
      region: TEST_REGION,
      endpoint: `http://127.0.0.1:${port}`,
      forcePathStyle: true,
      credentials: TEST_CREDENTIALS,
      timeoutMs: 500,
    });
    try {
      for (const call of [() => stuck.head('batches/x.zip'), () => stuck.put('batches/x.zip', Buffer.from('x')), () => stuck.get('x')]) {
        const started = Date.now();
        const error = await call().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(S3StorageError);
        expect(Date.now() - started).toBeLessThan(3000);
        expect(String(error)).not.toContain(TEST_CREDENTIALS.secretAccessKey);
      }
    } finally {
      stuck.destroy();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('names a refused call without its credentials', async () => {
    const wrong = new S3Storage({
      bucket: 'no-such-bucket',
      region: TEST_REGION,
      endpoint: server.endpoint,
      forcePathStyle: true,
      credentials: TEST_CREDENTIALS,
    });
    try {
      const error = await wrong.put('a/b', Buffer.from('x')).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(S3StorageError);
      expect((error as S3StorageError).message).toMatch(/^s3 put a\/b failed: NoSuchBucket/);
      expect(JSON.stringify(error)).not.toContain(TEST_CREDENTIALS.secretAccessKey);
      expect(String((error as Error).stack)).not.toContain(TEST_CREDENTIALS.secretAccessKey);
    } finally {
      wrong.destroy();
    }
  });
});
