import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { FolderStorage } from '../../src/storage/folder-storage.js';
import { ObjectNotFound, ObjectTooLarge } from '../../src/storage/object-storage.js';
import { tempDir } from '../helpers/temp-dirs.js';

/** The folder storage (docs/gift-processing.md, "Object storage"). */

function filesUnder(root: string): string[] {
  return fs
    .readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name);
}

describe('FolderStorage', () => {
  it('puts a buffer or a stream, gets it back, heads its size, and deletes it', async () => {
    const root = tempDir();
    const storage = new FolderStorage(root);
    expect(await storage.put('batches/a.zip', Buffer.from('hello'))).toEqual({ size: 5 });
    expect(await text(await storage.get('batches/a.zip'))).toBe('hello');
    expect(await storage.head('batches/a.zip')).toEqual({ size: 5 });
    const chunks = Array.from({ length: 64 }, (_, i) => Buffer.alloc(1024, i));
    expect(await storage.put('scans/b/c.tif', Readable.from(chunks))).toEqual({ size: 65_536 });
    expect(fs.readFileSync(path.join(root, 'scans/b/c.tif'))).toEqual(Buffer.concat(chunks));
    await storage.delete('batches/a.zip');
    expect(await storage.head('batches/a.zip')).toBeUndefined();
    await expect(storage.get('batches/a.zip')).rejects.toBeInstanceOf(ObjectNotFound);
    // Deleting what is not there is no error.
    await storage.delete('batches/a.zip');
  });

  it('replaces an object whole, and a head of a missing key is undefined', async () => {
    const storage = new FolderStorage(tempDir());
    await storage.put('x/y', Buffer.from('first version'));
    await storage.put('x/y', Buffer.from('second'));
    expect(await text(await storage.get('x/y'))).toBe('second');
    expect(await storage.head('x/missing')).toBeUndefined();
  });

  it('keeps nothing of a body larger than maxBytes, not even a partial file', async () => {
    const root = tempDir();
    const storage = new FolderStorage(root);
    const body = Readable.from(Array.from({ length: 10 }, () => Buffer.alloc(1000, 1)));
    await expect(storage.put('batches/big.zip', body, { maxBytes: 4096 })).rejects.toBeInstanceOf(ObjectTooLarge);
    await expect(storage.put('batches/big2.zip', Buffer.alloc(4097), { maxBytes: 4096 })).rejects.toBeInstanceOf(ObjectTooLarge);
    expect(await storage.head('batches/big.zip')).toBeUndefined();
    expect(filesUnder(root)).toEqual([]);
    // Exactly maxBytes is accepted.
    expect(await storage.put('batches/edge.zip', Buffer.alloc(4096), { maxBytes: 4096 })).toEqual({ size: 4096 });
  });

  it('keeps nothing of a stream that fails midway', async () => {
    const root = tempDir();
    const storage = new FolderStorage(root);
    const failing = new Readable({
      read() {
        this.push(Buffer.alloc(100));
        this.destroy(new Error('caller hung up'));
      },
    });
    await expect(storage.put('batches/cut.zip', failing)).rejects.toThrow('caller hung up');
    expect(filesUnder(root)).toEqual([]);
  });

  it('refuses keys that could leave its folder', async () => {
    const root = tempDir();
    const storage = new FolderStorage(path.join(root, 'objects'));
    for (const key of ['../escape', 'a/../../escape', '/etc/passwd', 'a/./b', 'a\\b', '', 'a//b', '.hidden/..']) {
      await expect(storage.put(key, Buffer.from('x')), key).rejects.toThrow(/invalid object key/);
      await expect(storage.get(key), key).rejects.toThrow(/invalid object key/);
      await expect(storage.head(key), key).rejects.toThrow(/invalid object key/);
      await expect(storage.delete(key), key).rejects.toThrow(/invalid object key/);
    }
    expect(fs.existsSync(path.join(root, 'escape'))).toBe(false);
  });

  it('makes upload URLs only with a signer and an environment', async () => {
    await expect(new FolderStorage(tempDir()).presignPut('batches/a.zip', 60, { environment: 'sandbox' })).rejects.toThrow(
      /no upload URL signer/,
    );
    const signed: unknown[] = [];
    const storage = new FolderStorage(tempDir(), { sign: (...args) => (signed.push(args), 'https://api.example.org/upload') });
    await expect(storage.presignPut('batches/a.zip', 60)).rejects.toThrow(/needs the environment/);
    expect(await storage.presignPut('batches/a.zip', 60, { environment: 'sandbox' })).toBe('https://api.example.org/upload');
    expect(signed).toEqual([['batches/a.zip', expect.any(Date), 'sandbox']]);
  });
});
