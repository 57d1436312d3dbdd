import { beforeAll, describe, expect, it } from 'vitest';
import { MailBatchIngestor } from '../../src/gift-processing/mail-batch-ingestor.js';
import { FolderStorage } from '../../src/storage/folder-storage.js';
import {
  CHECKS_TOTAL,
  endToEndBatch,
  expectMemberSeesScans,
  expectNonprofitSeesBatch,
  giftCounts,
  ingest,
  type Party,
  processingBalance,
  provisionLockbox,
  uploadUrl,
} from '../helpers/gift-end-to-end.js';
import { apiKeyFor } from '../helpers/gateway.js';
import { givingCaller } from '../helpers/giving.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Gift processing end to end with the default folder storage (docs/gift-processing.md): a PO box
 * request answered by the provider, an upload URL on the API host, the batch PUT to it,
 * ingestion, and what the nonprofit then reads through the API and sees on its dashboard.
 */

// The nonprofit is the fixture's, with a user of each role for its dashboard.
const { testDatabase: t, server, staff } = useOAuthServer();
let nonprofit: Party;
let provider: Awaited<ReturnType<typeof givingCaller>>;
let ingestor: MailBatchIngestor;

beforeAll(async () => {
  nonprofit = { id: staff.orgId, sandbox: await apiKeyFor(t.db, staff, 'sandbox') };
  provider = await givingCaller(t.db, '72-4000001', 'Keystone Lockbox Services', 'lockbox_provider');
  // The app's own storage: what its upload route writes is what the ingestor reads.
  expect(server.runtime.storage).toBeInstanceOf(FolderStorage);
  ingestor = new MailBatchIngestor({ db: t.db, storage: server.runtime.storage, maxBatchBytes: server.config.mail_batch_max_bytes });
});

async function put(url: URL, body: Buffer) {
  const answer = await fetch(url, { method: 'PUT', body });
  return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
}

describe('a mail batch through the folder storage', () => {
  it('becomes mail items, donations and deposits the nonprofit reads through the API and sees on its dashboard; the same ZIP again is a duplicate', async () => {
    const { lockboxId, locationId, paymentSourceId } = await provisionLockbox(server, t.db, nonprofit, provider);
    const balanceBefore = (await processingBalance(server, nonprofit)).current;
    const zip = await endToEndBatch();

    const url = await uploadUrl(server, provider, locationId);
    // The folder storage's URL is on the sandbox API host, and takes the PUT with no API key.
    expect(url.origin).toBe(server.urls.sandboxApi);
    const batchId = url.pathname.split('/').at(-1)!;
    const uploaded = await put(url, zip);
    expect(uploaded).toEqual({ status: 200, body: { batch_id: batchId, status: 'uploaded', size_bytes: zip.length } });

    expect(await ingest(t.db, ingestor, batchId)).toBe('ingested');
    const batch = await t.db.selectFrom('mail_batches').selectAll().where('id', '=', batchId).executeTakeFirstOrThrow();
    expect(batch).toMatchObject({ status: 'ingested', size_bytes: String(zip.length), attempts: 1, refusal_reason: null });
    // Every image of the index is kept in the storage under the batch.
    const images = await t.db
      .selectFrom('scan_images')
      .innerJoin('mail_item_scans', 'mail_item_scans.file_id', 'scan_images.file_id')
      .select('scan_images.storage_key')
      .where('mail_item_scans.batch_id', '=', batchId)
      .execute();
    // scans/<batch>/<try>/<position>.tiff: all nine of the one try that ingested it.
    expect(images.map((i) => i.storage_key.replace(/\/\d+\/(\d+\.tiff)$/, '/$1')).sort()).toEqual(
      Array.from({ length: 9 }, (_, i) => `scans/${batchId}/${i}.tiff`).sort(),
    );
    expect(new Set(images.map((i) => i.storage_key.split('/')[2])).size).toBe(1);
    for (const image of images) expect((await server.runtime.storage.head(image.storage_key))?.size).toBeGreaterThan(0);

    const seen = await expectNonprofitSeesBatch(server, t.db, { nonprofit, lockboxId, paymentSourceId, balanceBefore });
    expect(seen.deposits).toHaveLength(2);
    expect(seen.donations).toHaveLength(3);

    // A member of the nonprofit sees the envelopes on the dashboard's Mail page, and E1's images.
    await expectMemberSeesScans(server, staff, seen);

    // The provider sends the same ZIP again, through a new URL: a duplicate, and nothing is added.
    const counts = await giftCounts(t.db, nonprofit.id);
    const again = await uploadUrl(server, provider, locationId);
    const againId = again.pathname.split('/').at(-1)!;
    expect(againId).not.toBe(batchId);
    expect((await put(again, zip)).status).toBe(200);
    expect(await ingest(t.db, ingestor, againId)).toBe('duplicate');
    expect(await giftCounts(t.db, nonprofit.id)).toEqual(counts);
    expect((await processingBalance(server, nonprofit)).current - balanceBefore).toBe(CHECKS_TOTAL);
    // The duplicate stored no image of its own.
    expect(await server.runtime.storage.head(`scans/${againId}/1/0.tiff`)).toBeUndefined();
  });
});
