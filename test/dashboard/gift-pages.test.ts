import { describe, expect, it } from 'vitest';
import { signedScanImageUrl } from '../../src/dashboard/gift-image-urls.js';
import { MailBatchIngestor } from '../../src/gift-processing/mail-batch-ingestor.js';
import { renditionKey } from '../../src/gift-processing/scan-renditions.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { createTestLockbox } from '../helpers/gift.js';
import { appStorage, checkTiff, envelopeTiff, giftStaff, hugeTiffHeader, seedMailItem, seedRescan } from '../helpers/gift-dashboard.js';
import { buildMailBatch, checkLine, createMailBatch, tiffImage } from '../helpers/mail-batch.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * The dashboard's gift-processing pages (docs/gift-processing.md, "On the dashboard"): a
 * nonprofit's members see its deposits and mail items (filtered by lockbox and status), each
 * one's page, and the scans' images through short-lived signed URLs, converted once and kept;
 * another organization's rows are 404; other kinds of organization have no such pages.
 */

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const unescape = (html: string) => html.replace(/&amp;/g, '&');
const thumbnails = (html: string) => [...html.matchAll(/<img class="scan-thumb" src="([^"]+)"/g)].map((m) => unescape(m[1]!));
const fullImages = (html: string) => [...html.matchAll(/<img class="scan-image" src="([^"]+)"/g)].map((m) => unescape(m[1]!));
const minutesAgo = (n: number) => new Date(Date.now() - n * 60_000);

async function setting() {
  const staff = await giftStaff(t.db);
  const storage = appStorage(server.config.data_dir);
  const seed = (
    input: Omit<Parameters<typeof seedMailItem>[2], 'nonprofitId' | 'providerId' | 'lockbox'> & { lockbox?: typeof staff.lockbox },
  ) => seedMailItem(t.db, storage, { nonprofitId: staff.nonprofit.id, providerId: staff.provider.id, lockbox: staff.lockbox, ...input });
  return { ...staff, storage, seed };
}

async function image(session: Awaited<ReturnType<typeof dashboardSession>>, path: string) {
  const url = new URL(path, session.origin);
  const response = await fetch(url, { headers: { cookie: session.browser.cookieHeader(url) }, redirect: 'manual' });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    cache: response.headers.get('cache-control'),
    body: Buffer.from(await response.arrayBuffer()),
  };
}

describe('the Deposits pages', () => {
  it('list the nonprofit’s deposits newest first, 25 a page, with settled date, dollars, source, status and donations; a deposit’s page shows its donations', async () => {
    const s = await setting();
    const made = [];
    for (let i = 0; i < 26; i += 1) {
      made.push(
        await s.seed({
          createdAt: minutesAgo(100 - i),
          donations: [
            { amount: 10_000 + i * 100, donor: `Donor ${i}`, memo: `memo ${i}` },
            { amount: 2_550, donor: 'Grace Hopper', memo: 'in memory' },
          ],
          deposit: { settledAt: i === 25 ? null : minutesAgo(100 - i) },
        }),
      );
    }
    const member = await dashboardSession(server, 'sandbox', s.users.read_only);
    const page = await member.get(`/orgs/${s.ein}/deposits`);
    expect(page.status).toBe(200);
    const rows = [...page.html.matchAll(/<a href="\/orgs\/[^/]+\/deposits\/(deposit_[0-9a-z]+)"/g)].map((m) => m[1]);
    expect(rows).toHaveLength(25);
    // Newest first: the last one made leads.
    expect(rows[0]).toBe(made[25]!.depositId);
    expect(rows[24]).toBe(made[1]!.depositId);
    expect(page.html).toContain('$150.50'); // 125.00 + 25.50, the newest
    expect(page.html).toContain('Not settled yet');
    expect(page.html).toContain(`Lockbox ${s.lockbox.locationId}`);
    expect(page.html).toContain('Complete');
    expect(page.html).toMatch(/data-label="Donations">2</);
    const older = /href="([^"]+before=[^"]+)">Older deposits/.exec(page.html)![1]!;
    const second = await member.get(unescape(older));
    expect([...second.html.matchAll(/\/deposits\/(deposit_[0-9a-z]+)"/g)].map((m) => m[1])).toEqual([made[0]!.depositId]);

    const detail = await member.get(`/orgs/${s.ein}/deposits/${made[3]!.depositId!}`);
    expect(detail.status).toBe(200);
    expect(detail.html).toContain('Deposit of $128.50');
    expect(detail.html).toContain('Donor 3');
    expect(detail.html).toContain('memo 3');
    expect(detail.html).toContain('$103.00');
    expect(detail.html).toContain(`/orgs/${s.ein}/mail/${made[3]!.id}`);
    const bad = await member.get(`/orgs/${s.ein}/deposits?before=nothing`);
    expect(bad.status).toBe(400);
  });
});

describe('the Mail pages', () => {
  it('list mail items with lockbox, status, donations and a thumbnail; filter by status and lockbox with a bookmarkable GET form', async () => {
    const s = await setting();
    const other = await createTestLockbox(t.db, { nonprofitId: s.nonprofit.id, providerId: s.provider.id });
    const processed = await s.seed({
      createdAt: minutesAgo(30),
      images: [{ label: 'check_front', tiff: await checkTiff('$125.00') }],
      donations: [{ amount: 12_500, donor: 'Ada Donor', memo: 'food drive' }],
      deposit: {},
    });
    const review = await s.seed({
      createdAt: minutesAgo(20),
      status: 'needs_review',
      reviewLine: 4,
      reviewReason: 'amount: "12O.00" is not an amount',
    });
    const rejected = await s.seed({
      createdAt: minutesAgo(10),
      status: 'rejected',
      lockbox: other,
      reviewLine: 7,
      reviewReason: 'return_to_sender',
    });
    const member = await dashboardSession(server, 'sandbox', s.users.member);

    const all = await member.get(`/orgs/${s.ein}/mail`);
    expect(all.status).toBe(200);
    const order = [...all.html.matchAll(/<th scope="row"><a href="\/orgs\/[^/]+\/mail\/(mail_[0-9a-z]+)"/g)].map((m) => m[1]);
    expect(order).toEqual([rejected.id, review.id, processed.id]);
    expect(all.html).toContain(`${s.lockbox.locationId} · PO Box ${s.lockbox.locationId.slice(3)}, Newark, NJ 07101`);
    expect(all.html).toContain('Needs review');
    expect(thumbnails(all.html)).toHaveLength(1);
    expect(thumbnails(all.html)[0]).toContain(`/mail/images/${processed.imageIds[0]}?size=thumb&`);
    expect(all.html).toContain('<label for="status">Status</label>');
    expect(all.html).toContain('<label for="lockbox">Lockbox</label>');

    const byStatus = await member.get(`/orgs/${s.ein}/mail?status=needs_review`);
    expect([...byStatus.html.matchAll(/\/mail\/(mail_[0-9a-z]+)"/g)].map((m) => m[1])).toEqual([review.id]);
    expect(byStatus.html).toContain('<option value="needs_review" selected>');
    const byLockbox = await member.get(`/orgs/${s.ein}/mail?lockbox=${other.id}&status=`);
    expect([...byLockbox.html.matchAll(/\/mail\/(mail_[0-9a-z]+)"/g)].map((m) => m[1])).toEqual([rejected.id]);
    const none = await member.get(`/orgs/${s.ein}/mail?lockbox=${other.id}&status=processed`);
    expect(none.html).toContain('No mail matches these filters.');
    expect((await member.get(`/orgs/${s.ein}/mail?status=lost`)).status).toBe(400);
    expect((await member.get(`/orgs/${s.ein}/mail?lockbox=lockbox_00000000000000000000000000`)).status).toBe(400);
  });

  it('shows a mail item’s scans newest first with their images, its donations, its deposit, and why it needs review', async () => {
    const s = await setting();
    const item = await s.seed({
      createdAt: minutesAgo(60),
      images: [
        { label: 'check_front', tiff: await checkTiff('$75.00') },
        { label: 'check_back', tiff: await checkTiff('endorse') },
        { label: 'envelope', tiff: await envelopeTiff() },
      ],
      donations: [{ amount: 7_500, donor: 'Ada Donor', memo: 'for the pantry' }],
      deposit: {},
    });
    // A rescan: a newer scan of the same envelope.
    const rescan = await seedRescan(
      t.db,
      s.storage,
      item.id,
      [{ label: 'correspondence', tiff: await checkTiff('Thank you') }],
      minutesAgo(5),
    );
    const review = await s.seed({ status: 'needs_review', reviewLine: 3, reviewReason: 'routing_number: fails its checksum' });

    const reader = await dashboardSession(server, 'sandbox', s.users.read_only);
    const page = await reader.get(`/orgs/${s.ein}/mail/${item.id}`);
    expect(page.status).toBe(200);
    const images = fullImages(page.html);
    expect(images.map((src) => /images\/(image_[0-9a-z]+)\?/.exec(src)![1])).toEqual([...rescan, ...item.imageIds]);
    expect(page.html).toContain('Letter, scanned');
    expect(page.html).toContain('Check, front');
    expect(page.html).toContain('Check, back');
    expect(page.html).toContain('Envelope, scanned');
    expect(page.html).toContain('(newest)');
    expect(page.html).toContain('for the pantry');
    expect(page.html).toContain('Ada Donor');
    expect(page.html).toContain('$75.00');
    expect(page.html).toContain(`/orgs/${s.ein}/deposits/${item.depositId!}`);
    expect(page.html).not.toContain('id="mail-reason"');

    const reviewed = await reader.get(`/orgs/${s.ein}/mail/${review.id}`);
    expect(reviewed.html).toContain('Why it needs review');
    expect(reviewed.html).toMatch(/id="mail-reason">Line 3 of the batch&#39;s index: routing_number: fails its checksum</);
    expect(reviewed.html).toContain('No scan yet.');
  });
});

describe('scan images', () => {
  it('serve a signed URL’s image as WebP (private, at most 5 minutes), convert it once and keep the rendition; expired or altered URLs are 403', async () => {
    const s = await setting();
    const item = await s.seed({
      images: [{ label: 'check_front', tiff: await checkTiff('$42.00', 'Ada', { width: 3000, height: 1350 }) }],
    });
    const member = await dashboardSession(server, 'sandbox', s.users.member);
    const page = await member.get(`/orgs/${s.ein}/mail/${item.id}`);
    const [full] = fullImages(page.html);
    const imageId = item.imageIds[0]!;
    expect(await s.storage.head(renditionKey(imageId, 'full'))).toBeUndefined();

    const first = await image(member, full!);
    expect(first.status).toBe(200);
    expect(first.type).toBe('image/webp');
    const maxAge = Number(/^private, max-age=(\d+)$/.exec(first.cache!)![1]);
    expect(maxAge).toBeGreaterThan(0);
    expect(maxAge).toBeLessThanOrEqual(300);
    const { default: sharp } = await import('sharp');
    const meta = await sharp(first.body).metadata();
    expect(meta).toMatchObject({ format: 'webp', width: 2000 });
    expect(await s.storage.head(renditionKey(imageId, 'full'))).toBeDefined();

    // Kept: with the TIFF gone, the second request still answers, from the rendition.
    const tiffKey = (await t.db.selectFrom('scan_images').select('storage_key').where('id', '=', imageId).executeTakeFirstOrThrow())
      .storage_key;
    await s.storage.delete(tiffKey);
    const second = await image(member, full!);
    expect(second.status).toBe(200);
    expect(second.body.equals(first.body)).toBe(true);

    const thumb = await image(member, signedScanImageUrl(server.runtime.keys, { id: s.nonprofit.id, ein: s.ein }, imageId, 'thumb'));
    // The thumbnail was never made and the TIFF is gone: a placeholder, not a server error.
    expect(thumb.status).toBe(422);
    expect(thumb.type).toContain('image/svg+xml');

    const url = new URL(full!, member.origin);
    const tampered = new URL(url);
    tampered.searchParams.set('sig', `${url.searchParams.get('sig')!.slice(0, -2)}AA`);
    expect((await image(member, tampered.pathname + tampered.search)).status).toBe(403);
    const resized = new URL(url);
    resized.searchParams.set('size', 'thumb');
    expect((await image(member, resized.pathname + resized.search)).status).toBe(403);
    const later = new URL(url);
    later.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 60));
    expect((await image(member, later.pathname + later.search)).status).toBe(403);
    const expired = signedScanImageUrl(server.runtime.keys, { id: s.nonprofit.id, ein: s.ein }, imageId, 'full', Date.now() - 301_000);
    expect((await image(member, expired)).status).toBe(403);
    const unsigned = new URL(url);
    unsigned.searchParams.delete('sig');
    expect((await image(member, unsigned.pathname + unsigned.search)).status).toBe(403);
    expect((await image(member, `/orgs/${s.ein}/mail/images/image_00000000000000000000000000?size=full&expires=1&sig=x`)).status).toBe(404);
  });

  it('answers an undecodable TIFF, or one claiming too many pixels, with a 422 placeholder, and the process keeps serving', async () => {
    const s = await setting();
    const item = await s.seed({
      images: [
        { label: 'check_front', tiff: Buffer.concat([Buffer.from('II*\0'), Buffer.alloc(64, 7)]) },
        { label: 'check_back', tiff: await checkTiff('$9.00') },
        { label: 'envelope', tiff: hugeTiffHeader() },
      ],
    });
    const member = await dashboardSession(server, 'sandbox', s.users.member);
    const page = await member.get(`/orgs/${s.ein}/mail/${item.id}`);
    const [broken, good, huge] = fullImages(page.html);
    const answer = await image(member, broken!);
    expect(answer.status).toBe(422);
    expect(answer.body.toString()).toContain('Image unavailable');
    expect(await s.storage.head(renditionKey(item.imageIds[0]!, 'full'))).toBeUndefined();
    expect((await image(member, good!)).status).toBe(200);
    // A header claiming 50,000 × 50,000 pixels is refused before decoding.
    const bomb = await image(member, huge!);
    expect(bomb.status).toBe(422);
    expect(bomb.body.toString()).toContain('Image unavailable');
    expect((await image(member, good!)).status).toBe(200);
  });
});

describe('an ingested batch on the pages', () => {
  it('shows what the ingestor made of a batch: its envelopes, their scans’ images, donations, deposits and review reasons', async () => {
    const s = await setting();
    const zip = await buildMailBatch(
      [
        checkLine('E1', '125.00', 'e1/front.tif', { back_image: 'e1/back.tif' }),
        checkLine('E1', '1,250.00', 'e1/front2.tif', { donor_first_name: 'Grace', donor_last_name: 'Hopper', memo: 'Year-end gift' }),
        { envelope_id: 'E1', received_at: '2026-11-27', item_type: 'envelope', front_image: 'e1/envelope.tif' },
        checkLine('E2', '12.5', 'e2/check.tif'),
      ],
      {
        'e1/front.tif': await tiffImage({ text: '$125.00' }),
        'e1/back.tif': await tiffImage({ text: 'endorsed' }),
        'e1/front2.tif': await tiffImage({ text: '$1,250.00' }),
        'e1/envelope.tif': await tiffImage({ width: 800, height: 400, text: 'Riverside Food Bank' }),
        'e2/check.tif': await tiffImage({ text: '$12.5?' }),
      },
    );
    const batch = await createMailBatch(t.db, s.lockbox, s.provider.id);
    await s.storage.put(batch.storageKey, zip);
    await new MailBatchIngestor({ db: t.db, storage: s.storage }).runOnce();
    const items = await t.db
      .selectFrom('mail_items')
      .select(['id', 'envelope_id'])
      .where('batch_id', '=', batch.id)
      .orderBy('envelope_id')
      .execute();
    expect(items.map((i) => i.envelope_id)).toEqual(['E1', 'E2']);

    const member = await dashboardSession(server, 'sandbox', s.users.member);
    const list = await member.get(`/orgs/${s.ein}/mail`);
    expect(thumbnails(list.html)).toHaveLength(2);
    for (const src of thumbnails(list.html)) expect((await image(member, src)).status).toBe(200);
    const e1 = await member.get(`/orgs/${s.ein}/mail/${items[0]!.id}`);
    expect(fullImages(e1.html)).toHaveLength(4);
    for (const src of fullImages(e1.html)) expect((await image(member, src)).type).toBe('image/webp');
    expect(e1.html).toContain('Grace Hopper');
    expect(e1.html).toContain('Year-end gift');
    expect(e1.html).toContain('$1,375.00');
    const e2 = await member.get(`/orgs/${s.ein}/mail/${items[1]!.id}`);
    expect(e2.html).toContain('Why it needs review');
    expect(e2.html).toContain('does not parse');
    const deposits = await member.get(`/orgs/${s.ein}/deposits`);
    expect(deposits.html).toContain('$1,375.00');
    expect(deposits.html).toMatch(/data-label="Donations">2</);
  });
});

describe('who sees what', () => {
  it('answers another nonprofit’s deposit, mail item and image 404, and signed-out visitors go to sign in', async () => {
    const s = await setting();
    const theirs = await setting();
    const item = await theirs.seed({
      images: [{ label: 'check_front', tiff: await checkTiff('$1.00') }],
      donations: [{ amount: 100, donor: 'Ada', memo: '' }],
      deposit: {},
    });
    const member = await dashboardSession(server, 'sandbox', s.users.owner);
    expect((await member.get(`/orgs/${s.ein}/deposits/${item.depositId!}`)).status).toBe(404);
    expect((await member.get(`/orgs/${s.ein}/mail/${item.id}`)).status).toBe(404);
    // A URL signed for the other nonprofit, asked through one's own: not among one's images.
    const signed = signedScanImageUrl(server.runtime.keys, { id: s.nonprofit.id, ein: s.ein }, item.imageIds[0]!, 'thumb');
    expect((await image(member, signed)).status).toBe(404);
    // Through theirs: not a member of it.
    const theirUrl = signedScanImageUrl(server.runtime.keys, { id: theirs.nonprofit.id, ein: theirs.ein }, item.imageIds[0]!, 'thumb');
    expect((await image(member, theirUrl)).status).toBe(404);
    const anonymous = await fetch(new URL(theirUrl, member.origin), { redirect: 'manual' });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toMatch(/^\/sign-in\?next=/);
  });

  it('gives a grantmaker’s members no Deposits or Mail pages nor tabs; a nonprofit’s members get both tabs', async () => {
    const grantmaker = await createStaff(t.db, { kind: 'grantmaker' });
    const dashed = `${grantmaker.ein.slice(0, 2)}-${grantmaker.ein.slice(2)}`;
    const session = await dashboardSession(server, 'sandbox', grantmaker.users.owner);
    const members = await session.get(`/orgs/${dashed}/members`);
    expect(members.html).not.toContain(`/orgs/${dashed}/deposits"`);
    expect(members.html).not.toContain(`/orgs/${dashed}/mail"`);
    expect((await session.get(`/orgs/${dashed}/deposits`)).status).toBe(404);
    expect((await session.get(`/orgs/${dashed}/mail`)).status).toBe(404);

    const s = await setting();
    const reader = await dashboardSession(server, 'sandbox', s.users.read_only);
    const mail = await reader.get(`/orgs/${s.ein}/mail`);
    const tabs = /<nav class="tabs"[\s\S]*?<\/nav>/.exec(mail.html)![0];
    expect(tabs).toContain(`href="/orgs/${s.ein}/deposits">Deposits</a>`);
    expect(tabs).toContain(`href="/orgs/${s.ein}/mail" aria-current="page">Mail</a>`);
  });
});
