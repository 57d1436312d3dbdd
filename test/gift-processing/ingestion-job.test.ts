import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestBatch } from '../../src/gift-processing/batch-ingestion.js';
import { GAVE_UP_REASON, MailBatchIngestor } from '../../src/gift-processing/mail-batch-ingestor.js';
import { claimUploadedBatch } from '../../src/gift-processing/mail-batches-repository.js';
import { FolderStorage } from '../../src/storage/folder-storage.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { giftParties } from '../helpers/gift.js';
import { buildMailBatch, checkLine, createMailBatch, tiffImage } from '../helpers/mail-batch.js';
import { tempDir } from '../helpers/temp-dirs.js';

let t: TestDatabase;
let root: string;
let storage: FolderStorage;
let front: Buffer;
let back: Buffer;
beforeAll(async () => {
  t = await createTestDatabase();
  root = tempDir();
  storage = new FolderStorage(root);
  front = await tiffImage({ text: '$75.00' });
  back = await tiffImage({ text: 'for deposit only' });
});
afterAll(async () => {
  await t?.drop();
});

async function batchRow(id: string) {
  return t.db.selectFrom('mail_batches').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

async function counts(organizationId: string) {
  const count = async (table: 'mail_items' | 'donations' | 'deposits' | 'events') =>
    Number(
      (
        await t.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .where('organization_id', '=', organizationId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const scans = await t.db
    .selectFrom('mail_item_scans')
    .innerJoin('mail_items', 'mail_items.id', 'mail_item_scans.mail_item_id')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('mail_items.organization_id', '=', organizationId)
    .executeTakeFirstOrThrow();
  return {
    mailItems: await count('mail_items'),
    scans: Number(scans.n),
    donations: await count('donations'),
    deposits: await count('deposits'),
    events: await count('events'),
  };
}

function storedScans(batchId: string): string[] {
  const dir = path.join(root, 'scans', batchId);
  // Each try stores under its own folder: scans/<batch>/<try>/<position>.tiff.
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .filter((name) => name.endsWith('.tiff'))
    .map((name) => name.split(path.sep).join('/'))
    .sort();
}

describe('noticing uploads', () => {
  it('marks a batch uploaded once its object is in storage, and expired when its time ran out without one', async () => {
    const { provider, lockbox } = await giftParties(t.db);
    const waiting = await createMailBatch(t.db, lockbox, provider.id);
    const late = await createMailBatch(t.db, lockbox, provider.id, { uploadExpiresAt: new Date(Date.now() - 1000) });
    const ingestor = new MailBatchIngestor({ db: t.db, storage });
    expect(await ingestor.noticeUploads()).toEqual({ uploaded: 0, expired: 1 });
    expect((await batchRow(waiting.id)).status).toBe('awaiting_upload');
    expect((await batchRow(late.id)).status).toBe('expired');

    const zip = await buildMailBatch([checkLine('N1', '75.00', 'f.tif')], { 'f.tif': front });
    await storage.put(waiting.storageKey, zip);
    expect(await ingestor.noticeUploads()).toEqual({ uploaded: 1, expired: 0 });
    expect(await batchRow(waiting.id)).toMatchObject({ status: 'uploaded', size_bytes: String(zip.length), uploaded_at: expect.any(Date) });
    // An object arriving after the batch expired is not ingested.
    await storage.put(late.storageKey, zip);
    await ingestor.runOnce();
    expect((await batchRow(late.id)).status).toBe('expired');
    expect((await batchRow(waiting.id)).status).toBe('ingested');
  });
});

describe('uploaded again', () => {
  it('the same ZIP again is a duplicate and adds nothing', async () => {
    const { nonprofit, provider, lockbox } = await giftParties(t.db);
    const zip = await buildMailBatch([checkLine('D1', '75.00', 'f.tif', { back_image: 'b.tif' })], { 'f.tif': front, 'b.tif': back });
    const ingestor = new MailBatchIngestor({ db: t.db, storage });
    const first = await createMailBatch(t.db, lockbox, provider.id, { status: 'uploaded' });
    await storage.put(first.storageKey, zip);
    expect((await ingestor.runOnce()).ingested?.outcome.status).toBe('ingested');
    const once = await counts(nonprofit.id);
    expect(once).toEqual({ mailItems: 1, scans: 1, donations: 1, deposits: 1, events: 2 });

    const again = await createMailBatch(t.db, lockbox, provider.id, { status: 'uploaded' });
    await storage.put(again.storageKey, zip);
    expect((await ingestor.runOnce()).ingested?.outcome).toEqual({ status: 'duplicate', sha256: (await batchRow(first.id)).sha256 });
    expect((await batchRow(again.id)).status).toBe('duplicate');
    expect(await counts(nonprofit.id)).toEqual(once);
    expect(storedScans(again.id)).toEqual([]);
  });

  it('a known envelope in a new batch is a rescan: a new scan, no donation or deposit again; the same images again add nothing', async () => {
    const { nonprofit, provider, lockbox } = await giftParties(t.db);
    const ingestor = new MailBatchIngestor({ db: t.db, storage });
    const upload = async (zip: Buffer) => {
      const batch = await createMailBatch(t.db, lockbox, provider.id, { status: 'uploaded' });
      await storage.put(batch.storageKey, zip);
      const tick = await ingestor.runOnce();
      expect(tick.ingested?.outcome.status).toBe('ingested');
      return { batch, outcome: tick.ingested!.outcome };
    };
    await upload(await buildMailBatch([checkLine('R1', '75.00', 'f.tif')], { 'f.tif': front }));
    const item = await t.db.selectFrom('mail_items').selectAll().where('lockbox_id', '=', lockbox.id).executeTakeFirstOrThrow();

    const rescan = await upload(
      await buildMailBatch([checkLine('R1', '75.00', 'f.tif', { back_image: 'b.tif' })], { 'f.tif': front, 'b.tif': back }),
    );
    expect(rescan.outcome).toMatchObject({ mailItems: 0, rescans: 1, donations: 0, deposits: 0 });
    const scans = await t.db.selectFrom('mail_item_scans').selectAll().where('mail_item_id', '=', item.id).orderBy('created_at').execute();
    expect(scans.map((s) => s.batch_id)).toEqual([item.batch_id, rescan.batch.id]);
    expect(await counts(nonprofit.id)).toEqual({ mailItems: 1, scans: 2, donations: 1, deposits: 1, events: 2 });

    // Other bytes (another memo), the same images: no new scan, and its stored copies are removed.
    const same = await upload(
      await buildMailBatch([checkLine('R1', '75.00', 'f.tif', { back_image: 'b.tif', memo: 'again' })], { 'f.tif': front, 'b.tif': back }),
    );
    expect(same.outcome).toMatchObject({ rescans: 1, donations: 0 });
    expect(await counts(nonprofit.id)).toEqual({ mailItems: 1, scans: 2, donations: 1, deposits: 1, events: 2 });
    expect(storedScans(same.batch.id)).toEqual([]);
  });
});

describe('exactly once', () => {
  it('two ingestors ticking at once make one set of rows', async () => {
    const { nonprofit, provider, lockbox } = await giftParties(t.db);
    const batch = await createMailBatch(t.db, lockbox, provider.id);
    await storage.put(
      batch.storageKey,
      await buildMailBatch([checkLine('C1', '75.00', 'f.tif'), checkLine('C2', '75.00', 'f.tif')], { 'f.tif': front }),
    );
    const [a, b] = [new MailBatchIngestor({ db: t.db, storage }), new MailBatchIngestor({ db: t.db, storage })];
    const ticks = await Promise.all([a.runOnce(), b.runOnce(), a.runOnce(), b.runOnce()]);
    expect(ticks.filter((tick) => tick.ingested?.outcome.status === 'ingested')).toHaveLength(1);
    expect((await batchRow(batch.id)).status).toBe('ingested');
    expect(await counts(nonprofit.id)).toEqual({ mailItems: 2, scans: 2, donations: 2, deposits: 2, events: 4 });
  });

  it('a claim taken over after its lease ran out writes nothing, even racing the new one', async () => {
    const { nonprofit, provider, lockbox } = await giftParties(t.db);
    const batch = await createMailBatch(t.db, lockbox, provider.id, { status: 'uploaded' });
    await storage.put(batch.storageKey, await buildMailBatch([checkLine('L1', '75.00', 'f.tif')], { 'f.tif': front }));
    const now = new Date();
    const stale = (await claimUploadedBatch(t.db, now, 60))!;
    expect(await claimUploadedBatch(t.db, now, 60)).toBeUndefined();
    const later = new Date(now.getTime() + 61_000);
    const fresh = (await claimUploadedBatch(t.db, later, 60))!;
    expect([stale.attempts, fresh.attempts]).toEqual([1, 2]);
    const outcomes = await Promise.all([
      ingestBatch({ db: t.db, storage, now: () => later }, stale),
      ingestBatch({ db: t.db, storage, now: () => later }, fresh),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['superseded', 'ingested']);
    expect(await counts(nonprofit.id)).toEqual({ mailItems: 1, scans: 1, donations: 1, deposits: 1, events: 2 });
    // The superseded try removed its own copy only; the images the rows name are the new try's.
    expect(storedScans(batch.id)).toEqual(['2/0.tiff']);
    const image = await t.db
      .selectFrom('scan_images')
      .innerJoin('mail_item_scans', 'mail_item_scans.file_id', 'scan_images.file_id')
      .select('scan_images.storage_key')
      .where('mail_item_scans.batch_id', '=', batch.id)
      .executeTakeFirstOrThrow();
    expect(await storage.head(image.storage_key)).toBeDefined();
  });
});

/** A real folder storage whose puts of scans take `delayMs`: a big batch, slow to store. */
class SlowStorage extends FolderStorage {
  delayMs = 0;
  override async put(key: string, body: Readable | Buffer, options?: { maxBytes?: number }) {
    if (key.startsWith('scans/')) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    return super.put(key, body, options);
  }
}

describe('the lease', () => {
  it('is renewed while a slow batch is ingested, so no other ingestor takes it over', async () => {
    const { nonprofit, provider, lockbox } = await giftParties(t.db);
    const slow = new SlowStorage(root);
    const batch = await createMailBatch(t.db, lockbox, provider.id, { status: 'uploaded' });
    await slow.put(batch.storageKey, await buildMailBatch([checkLine('S1', '75.00', 'f.tif')], { 'f.tif': front }));
    slow.delayMs = 1_600;
    const holder = new MailBatchIngestor({ db: t.db, storage: slow, leaseSeconds: 1 });
    const running = holder.runOnce();
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const other = await new MailBatchIngestor({ db: t.db, storage, leaseSeconds: 1 }).runOnce();
    expect(other.ingested).toBeUndefined();
    expect((await running).ingested?.outcome.status).toBe('ingested');
    expect(await batchRow(batch.id)).toMatchObject({ status: 'ingested', attempts: 1 });
    expect(await counts(nonprofit.id)).toMatchObject({ mailItems: 1, donations: 1 });
  });
});

/** A real folder storage whose puts of scans fail while `failing` is set: an outage mid-batch. */
class FlakyStorage extends FolderStorage {
  failing = true;
  override async put(key: string, body: Readable | Buffer, options?: { maxBytes?: number }) {
    if (this.failing && key.endsWith('/1.tiff')) throw new Error('storage unavailable');
    return super.put(key, body, options);
  }
}

describe('retries', () => {
  it('an unexpected error leaves the batch for a retry after its lease, with nothing kept meanwhile', async () => {
    const { nonprofit, provider, lockbox } = await giftParties(t.db);
    const flaky = new FlakyStorage(root);
    let clock = Date.now();
    const ingestor = new MailBatchIngestor({ db: t.db, storage: flaky, now: () => new Date(clock), leaseSeconds: 60 });
    const batch = await createMailBatch(t.db, lockbox, provider.id, { status: 'uploaded' });
    await flaky.put(
      batch.storageKey,
      await buildMailBatch([checkLine('F1', '75.00', 'f.tif', { back_image: 'b.tif' })], { 'f.tif': front, 'b.tif': back }),
    );
    expect((await ingestor.runOnce()).ingested?.outcome).toEqual({ status: 'retry', error: 'storage unavailable' });
    expect(await batchRow(batch.id)).toMatchObject({ status: 'uploaded', attempts: 1 });
    expect(storedScans(batch.id)).toEqual([]);
    expect((await ingestor.runOnce()).ingested).toBeUndefined();
    flaky.failing = false;
    clock += 61_000;
    expect((await ingestor.runOnce()).ingested?.outcome.status).toBe('ingested');
    expect(await batchRow(batch.id)).toMatchObject({ status: 'ingested', attempts: 2 });
    expect(await counts(nonprofit.id)).toMatchObject({ mailItems: 1, donations: 1 });
  });

  it('after five tries the batch is refused as one that could not be processed', async () => {
    const { nonprofit, provider, lockbox } = await giftParties(t.db);
    const flaky = new FlakyStorage(root);
    let clock = Date.now();
    const ingestor = new MailBatchIngestor({ db: t.db, storage: flaky, now: () => new Date(clock), leaseSeconds: 60 });
    const batch = await createMailBatch(t.db, lockbox, provider.id, { status: 'uploaded' });
    await flaky.put(
      batch.storageKey,
      await buildMailBatch([checkLine('G1', '75.00', 'f.tif', { back_image: 'b.tif' })], { 'f.tif': front, 'b.tif': back }),
    );
    const outcomes = [];
    for (let i = 0; i < 5; i += 1) {
      outcomes.push((await ingestor.runOnce()).ingested?.outcome.status);
      clock += 61_000;
    }
    expect(outcomes).toEqual(['retry', 'retry', 'retry', 'retry', 'refused']);
    expect(await batchRow(batch.id)).toMatchObject({ status: 'refused', refusal_reason: GAVE_UP_REASON, refusal_line: null, attempts: 5 });
    expect(storedScans(batch.id)).toEqual([]);
    expect(await counts(nonprofit.id)).toMatchObject({ mailItems: 0, donations: 0, deposits: 0 });
  });
});
