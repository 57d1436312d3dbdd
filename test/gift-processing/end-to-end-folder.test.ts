import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatEin } from '../../src/accounts/ein.js';
import { MailBatchIngestor } from '../../src/gift-processing/mail-batch-ingestor.js';
import { FolderStorage } from '../../src/storage/folder-storage.js';
import {
  CHECKS_TOTAL,
  endToEndBatch,
  expectNonprofitSeesBatch,
  giftCounts,
  ingest,
  type Party,
  processingBalance,
  provisionLockbox,
  uploadUrl,
} from '../helpers/gift-end-to-end.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { apiKeyFor } from '../helpers/gateway.js';
import { givingCaller } from '../helpers/giving.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Gift processing end to end with the default folder storage (docs/gift-processing.md): a PO box
 * request answered by the provider, an upload URL on the API host, the batch PUT to it,
 * ingestion, and what the nonprofit then reads through the API.
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
  it('becomes mail items, donations and deposits the nonprofit reads; the same ZIP again is a duplicate', async () => {
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
    expect(images.map((i) => i.storage_key).sort()).toEqual(Array.from({ length: 9 }, (_, i) => `scans/${batchId}/${i}.tiff`).sort());
    for (const image of images) expect((await server.runtime.storage.head(image.storage_key))?.size).toBeGreaterThan(0);

    const seen = await expectNonprofitSeesBatch(server, t.db, { nonprofit, lockboxId, paymentSourceId, balanceBefore });
    expect(seen.deposits).toHaveLength(2);
    expect(seen.donations).toHaveLength(3);

    // A member of the nonprofit sees the envelopes on the dashboard's Mail page, and E1's images.
    const member = await dashboardSession(server, 'sandbox', staff.users.member);
    const ein = formatEin(staff.ein);
    const mail = await member.get(`/orgs/${ein}/mail`);
    expect(mail.status).toBe(200);
    const listed = [...mail.html.matchAll(/<th scope="row"><a href="\/orgs\/[^/]+\/mail\/(mail_[0-9a-z]+)"/g)].map((m) => m[1]);
    expect(listed.sort()).toEqual(seen.mailItems.map((i) => i.id).sort());
    const e1 = seen.byEnvelope.E1!;
    const page = await member.get(`/orgs/${ein}/mail/${String(e1.id)}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Envelope E1');
    expect(page.html).toContain('$1,375.00');
    const figures = [...page.html.matchAll(/<img class="scan-image" src="([^"]+)"[^>]*>.*?<figcaption>([^<]+)<\/figcaption>/gs)];
    expect(figures.map((f) => f[2])).toEqual(['Check, front', 'Check, back', 'Check, front', 'Check, back', 'Envelope']);
    for (const [, src] of figures) {
      const url = new URL(src!.replace(/&amp;/g, '&'), member.origin);
      expect(url.searchParams.get('sig')).toBeTruthy();
      const answer = await fetch(url, { headers: { cookie: member.browser.cookieHeader(url) }, redirect: 'manual' });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toMatch(/^image\/(webp|png)$/);
      const body = Buffer.from(await answer.arrayBuffer());
      expect(body.length).toBeGreaterThan(0);
      const decoded = await sharp(body).metadata();
      expect(['webp', 'png']).toContain(decoded.format);
      expect(decoded.width).toBeGreaterThan(0);
    }

    // The provider sends the same ZIP again, through a new URL: a duplicate, and nothing is added.
    const counts = await giftCounts(t.db, nonprofit.id);
    const again = await uploadUrl(server, provider, locationId);
    const againId = again.pathname.split('/').at(-1)!;
    expect(againId).not.toBe(batchId);
    expect((await put(again, zip)).status).toBe(200);
    expect(await ingest(t.db, ingestor, againId)).toBe('duplicate');
    expect(await giftCounts(t.db, nonprofit.id)).toEqual(counts);
    expect((await processingBalance(server, nonprofit)).current - balanceBefore).toBe(CHECKS_TOTAL);
    const items = await server.runtime.storage.head(`scans/${againId}/0.tiff`);
    expect(items).toBeUndefined();
  });
});
