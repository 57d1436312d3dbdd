import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MailBatchIngestor } from '../../src/gift-processing/mail-batch-ingestor.js';
import { renditionKey } from '../../src/gift-processing/scan-renditions.js';
import { S3Storage } from '../../src/storage/s3-storage.js';
import {
  endToEndBatch,
  expectMemberSeesScans,
  expectNonprofitSeesBatch,
  giftCounts,
  ingest,
  latestBatchOf,
  processingBalance,
  provisionLockbox,
  type Party,
  uploadUrl,
} from '../helpers/gift-end-to-end.js';
import { apiKeyFor } from '../helpers/gateway.js';
import { givingCaller } from '../helpers/giving.js';
import { startTestS3Server, TEST_BUCKET, TEST_CREDENTIALS, TEST_REGION, type TestS3Server } from '../helpers/s3-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Gift processing end to end with the S3 storage (docs/gift-processing.md, "Object storage"): the
 * app configured with `storage: s3` at an S3-protocol server (s3rver behind a proxy that checks
 * presigned signatures as S3 does, test/helpers/s3-server.ts). The provider PUTs the batch
 * straight to the bucket with the presigned URL it got; the ingestor notices the object and
 * ingests it.
 */

// Filled before the app starts: this file's first beforeAll runs before useOAuthServer's.
const config: Record<string, unknown> = {};
let s3: TestS3Server;
beforeAll(async () => {
  s3 = await startTestS3Server();
  Object.assign(config, {
    storage: 's3',
    s3_bucket: TEST_BUCKET,
    s3_region: TEST_REGION,
    s3_endpoint: s3.endpoint,
    s3_force_path_style: true,
    s3_access_key_id: TEST_CREDENTIALS.accessKeyId,
    s3_secret_access_key: TEST_CREDENTIALS.secretAccessKey,
  });
});
const { testDatabase: t, server, staff } = useOAuthServer({ config });
afterAll(async () => {
  await s3?.close();
});

let nonprofit: Party;
let provider: Awaited<ReturnType<typeof givingCaller>>;
let ingestor: MailBatchIngestor;

beforeAll(async () => {
  nonprofit = { id: staff.orgId, sandbox: await apiKeyFor(t.db, staff, 'sandbox') };
  provider = await givingCaller(t.db, '72-4000002', 'Keystone Lockbox Services', 'lockbox_provider');
  expect(server.runtime.storage).toBeInstanceOf(S3Storage);
  ingestor = new MailBatchIngestor({ db: t.db, storage: server.runtime.storage, maxBatchBytes: server.config.mail_batch_max_bytes });
});

describe('a mail batch through the S3 storage', () => {
  it('is PUT to the presigned URL, noticed in the bucket and ingested; the nonprofit reads what it made', async () => {
    const { lockboxId, locationId, paymentSourceId } = await provisionLockbox(server, t.db, nonprofit, provider);
    const balanceBefore = (await processingBalance(server, nonprofit)).current;
    const zip = await endToEndBatch();

    const url = await uploadUrl(server, provider, locationId);
    const batch = await latestBatchOf(t.db, lockboxId);
    // The bucket's own presigned URL for the batch's key, path-style at the endpoint.
    expect(url.origin).toBe(s3.endpoint);
    expect(url.pathname).toBe(`/${TEST_BUCKET}/${batch.storage_key}`);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('900');
    expect(batch.status).toBe('awaiting_upload');

    const answer = await fetch(url, { method: 'PUT', body: zip });
    expect(answer.status, await answer.text()).toBe(200);
    expect(await server.runtime.storage.head(batch.storage_key)).toEqual({ size: zip.length });

    expect(await ingest(t.db, ingestor, batch.id)).toBe('ingested');
    const row = await latestBatchOf(t.db, lockboxId);
    expect(row).toMatchObject({ id: batch.id, status: 'ingested', size_bytes: String(zip.length), refusal_reason: null });
    expect(row.uploaded_at).toBeInstanceOf(Date);
    // The scans' images are in the bucket.
    const images = await t.db
      .selectFrom('scan_images')
      .innerJoin('mail_item_scans', 'mail_item_scans.file_id', 'scan_images.file_id')
      .select('scan_images.storage_key')
      .where('mail_item_scans.batch_id', '=', batch.id)
      .execute();
    expect(images).toHaveLength(9);
    for (const image of images) expect((await server.runtime.storage.head(image.storage_key))?.size).toBeGreaterThan(0);

    const seen = await expectNonprofitSeesBatch(server, t.db, { nonprofit, lockboxId, paymentSourceId, balanceBefore });
    expect(seen.deposits).toHaveLength(2);
    expect(seen.donations).toHaveLength(3);
    // The dashboard shows the scans from the bucket (their renditions kept there too).
    await expectMemberSeesScans(server, staff, seen);
    const e1Images = await t.db
      .selectFrom('scan_images')
      .innerJoin('mail_item_scans', 'mail_item_scans.file_id', 'scan_images.file_id')
      .select('scan_images.id')
      .where('mail_item_scans.mail_item_id', '=', String(seen.byEnvelope.E1!.id))
      .execute();
    expect(e1Images).toHaveLength(5);
    for (const { id } of e1Images) expect((await server.runtime.storage.head(renditionKey(id, 'full')))?.size).toBeGreaterThan(0);
  });

  it('refuses a tampered presigned URL (403), so nothing is uploaded or ingested', async () => {
    const { lockboxId, locationId } = await provisionLockbox(server, t.db, nonprofit, provider);
    const counts = await giftCounts(t.db, nonprofit.id);
    const zip = await endToEndBatch();
    const url = await uploadUrl(server, provider, locationId);
    const batch = await latestBatchOf(t.db, lockboxId);

    const signature = url.searchParams.get('X-Amz-Signature')!;
    const forged = new URL(url);
    forged.searchParams.set('X-Amz-Signature', `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`);
    const longer = new URL(url);
    longer.searchParams.set('X-Amz-Expires', '604800');
    // The batch's signature put to another key of the bucket.
    const elsewhere = new URL(url);
    elsewhere.pathname = `/${TEST_BUCKET}/scans/${batch.id}/1/0.tiff`;
    for (const bad of [forged, longer, elsewhere]) {
      const answer = await fetch(bad, { method: 'PUT', body: zip });
      expect(answer.status, bad.pathname).toBe(403);
      expect(await answer.text()).toMatch(/<Code>SignatureDoesNotMatch<\/Code>/);
    }
    expect(await server.runtime.storage.head(batch.storage_key)).toBeUndefined();
    expect(await server.runtime.storage.head(`scans/${batch.id}/1/0.tiff`)).toBeUndefined();

    // The ingestor finds no object: the batch still awaits its upload, and nothing is made.
    const tick = await ingestor.runOnce();
    expect(tick.uploaded).toBe(0);
    expect(tick.ingested).toBeUndefined();
    expect(await latestBatchOf(t.db, lockboxId)).toMatchObject({ id: batch.id, status: 'awaiting_upload', size_bytes: null });
    expect(await giftCounts(t.db, nonprofit.id)).toEqual(counts);
  });
});
