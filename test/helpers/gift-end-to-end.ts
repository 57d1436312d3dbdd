import sharp from 'sharp';
import { expect } from 'vitest';
import { formatEin } from '../../src/accounts/ein.js';
import type { Db } from '../../src/db/database.js';
import { requestLockbox } from '../../src/gift-processing/lockboxes-service.js';
import type { MailBatchIngestor } from '../../src/gift-processing/mail-batch-ingestor.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { dashboardSession } from './dashboard.js';
import { apiGet, apiRequest } from './gateway.js';
import { buildMailBatch, checkLine, tiffImage } from './mail-batch.js';
import type { OAuthTestServer, Staff } from './oauth-server.js';

/**
 * The end-to-end path of gift processing (docs/gift-processing.md) through the real app: a PO box
 * request answered by the lockbox provider, an upload URL, a batch uploaded to it, ingestion, and
 * what the nonprofit then reads with its API key. Shared by the folder and S3 end-to-end tests.
 */

export interface Party {
  id: string;
  sandbox: string;
}

/** The checks of the batch below, in cents: two in envelope E1, one in E4. */
export const CHECKS = { E1: [12_500, 125_000], E4: [4_000] } as const;
export const CHECKS_TOTAL = [...CHECKS.E1, ...CHECKS.E4].reduce((a, b) => a + b, 0);

/**
 * A batch of four envelopes: E1 two checks (front and back each) and the envelope, processed;
 * E2 a check whose amount does not parse, needs_review; E3 returned to sender, rejected; E4 one
 * check, processed. Nine images in all.
 */
export async function endToEndBatch(): Promise<Buffer> {
  const images = {
    'e1/check1-front.tif': await tiffImage({ text: '$125.00' }),
    'e1/check1-back.tif': await tiffImage({ text: 'endorsed 1' }),
    'e1/check2-front.tif': await tiffImage({ text: '$1,250.00' }),
    'e1/check2-back.tif': await tiffImage({ text: 'endorsed 2' }),
    'e1/envelope.tif': await tiffImage({ width: 800, height: 400, text: 'Riverside Food Bank' }),
    'e2/check.tif': await tiffImage({ text: '$12.5?' }),
    'e3/envelope.tif': await tiffImage({ text: 'Return to sender' }),
    'e4/front.tif': await tiffImage({ text: '$40.00' }),
    'e4/back.tif': await tiffImage({ text: 'endorsed 4' }),
  };
  return buildMailBatch(
    [
      checkLine('E1', '125.00', 'e1/check1-front.tif', { back_image: 'e1/check1-back.tif' }),
      checkLine('E1', '1,250.00', 'e1/check2-front.tif', {
        back_image: 'e1/check2-back.tif',
        donor_first_name: 'Grace',
        donor_last_name: 'Hopper',
      }),
      { envelope_id: 'E1', received_at: '2026-11-27', item_type: 'envelope', front_image: 'e1/envelope.tif' },
      checkLine('E2', '12.5', 'e2/check.tif'),
      { envelope_id: 'E3', received_at: '2026-11-27', item_type: 'return_to_sender', front_image: 'e3/envelope.tif' },
      checkLine('E4', '40.00', 'e4/front.tif', { back_image: 'e4/back.tif', check_number: '7781' }),
    ],
    images,
  );
}

let nextPo = 700_000 + Math.floor(Math.random() * 90_000);

/** An operator's PO box request, answered by the provider with POST /v1/lockboxes/fulfill_request: the lockbox's id and location. */
export async function provisionLockbox(
  server: OAuthTestServer,
  db: Db,
  nonprofit: Party,
  provider: Party,
): Promise<{ lockboxId: string; locationId: string; paymentSourceId: string }> {
  const requestId = await requestLockbox(db, {
    nonprofitId: nonprofit.id,
    providerId: provider.id,
    providerEin: 'end-to-end',
    environment: 'sandbox',
    via: 'admin_cli',
  });
  const locationId = `po_${nextPo++}`;
  const address = { line1: `PO Box ${locationId.slice(3)}`, city: 'Newark', state: 'NJ', postal_code: '07101', country: 'US' };
  const answer = await apiRequest(server, 'sandbox', 'POST', '/v1/lockboxes/fulfill_request', {
    bearer: provider.sandbox,
    json: { request_id: requestId, location_id: locationId, address },
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  // The nonprofit sees its new lockbox, and the payment source it is on.
  const lockboxes = await apiGet(server, 'sandbox', '/v1/lockboxes', { bearer: nonprofit.sandbox });
  const lockbox = (lockboxes.body.results as { id: string; address: { line1: string } }[]).find((l) => l.address.line1 === address.line1);
  expect(lockbox).toBeDefined();
  const sources = await apiGet(server, 'sandbox', '/v1/payment_sources', { bearer: nonprofit.sandbox });
  const source = (sources.body.results as { id: string; lockbox?: { id: string } }[]).find((s) => s.lockbox?.id === lockbox!.id);
  expect(source).toMatchObject({ source_type: 'lockbox' });
  return { lockboxId: lockbox!.id, locationId, paymentSourceId: source!.id };
}

/** POST /v1/mailbox/upload_url with the provider's key: the URL it answers. */
export async function uploadUrl(server: OAuthTestServer, provider: Party, locationId: string): Promise<URL> {
  const answer = await apiRequest(server, 'sandbox', 'POST', '/v1/mailbox/upload_url', {
    bearer: provider.sandbox,
    json: { location_id: locationId },
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return new URL(answer.body.url as string);
}

/** The batch made for a lockbox's latest upload URL (the URL does not say it with S3). */
export async function latestBatchOf(db: Db, lockboxId: string) {
  return db.selectFrom('mail_batches').selectAll().where('lockbox_id', '=', lockboxId).orderBy('id', 'desc').executeTakeFirstOrThrow();
}

/**
 * Runs the ingestor until the batch is done (ingested, duplicate or refused). The server's own
 * ingestor polls too and may take the batch first; then this waits for its outcome.
 */
export async function ingest(db: Db, ingestor: MailBatchIngestor, batchId: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    await ingestor.runOnce();
    const { status } = await db.selectFrom('mail_batches').select('status').where('id', '=', batchId).executeTakeFirstOrThrow();
    if (status === 'ingested' || status === 'duplicate' || status === 'refused' || status === 'expired') return status;
    if (Date.now() > deadline) throw new Error(`batch ${batchId} still ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

type Body = Record<string, unknown>;
const results = (body: Body) => body.results as Body[];

/** The processing financial account of the nonprofit, and its current balance, through the API. */
export async function processingBalance(server: OAuthTestServer, nonprofit: Party): Promise<{ accountId: string; current: number }> {
  const accounts = await apiGet(server, 'sandbox', '/v1/financial_accounts', { bearer: nonprofit.sandbox });
  expect(accounts.status).toBe(200);
  const processing = results(accounts.body).find((a) => a.account_type === 'processing');
  expect(processing).toBeDefined();
  const accountId = processing!.id as string;
  const balance = await apiGet(server, 'sandbox', `/v1/financial_accounts/${accountId}/balance`, { bearer: nonprofit.sandbox });
  expect(balance.status).toBe(200);
  return { accountId, current: balance.body.current_balance as number };
}

export interface SeenGifts {
  mailItems: Body[];
  /** The mail items by the provider's envelope id (E1 to E4). */
  byEnvelope: Record<string, Body>;
  deposits: Body[];
  donations: Body[];
}

/**
 * What the nonprofit reads with its API key after the batch: its four mail items (statuses,
 * scans with file ids), a deposit per processed envelope of the sum of its checks, each
 * deposit's donations (settlement.deposit_id), its balance raised by the checks' sum, the
 * ledger balanced, the donation.created and deposit.created events.
 */
export async function expectNonprofitSeesBatch(
  server: OAuthTestServer,
  db: Db,
  input: { nonprofit: Party; lockboxId: string; paymentSourceId: string; balanceBefore: number },
): Promise<SeenGifts> {
  const { nonprofit } = input;
  const get = (path: string) => apiGet(server, 'sandbox', path, { bearer: nonprofit.sandbox });

  const items = await get(`/v1/mail_items?lockbox_id=${input.lockboxId}`);
  expect(items.status).toBe(200);
  const mailItems = results(items.body);
  // Which item is which envelope is the provider's id, kept in the table (the API does not serve it).
  const envelopes = new Map(
    (await db.selectFrom('mail_items').select(['id', 'envelope_id']).where('lockbox_id', '=', input.lockboxId).execute()).map((r) => [
      r.id,
      r.envelope_id,
    ]),
  );
  const byEnvelope = Object.fromEntries(mailItems.map((item) => [envelopes.get(item.id as string), item]));
  expect(Object.keys(byEnvelope).sort()).toEqual(['E1', 'E2', 'E3', 'E4']);
  expect(byEnvelope.E1).toMatchObject({ status: 'processed', lockbox_id: input.lockboxId });
  expect(byEnvelope.E2).toMatchObject({ status: 'needs_review' });
  expect(byEnvelope.E3).toMatchObject({ status: 'rejected' });
  expect(byEnvelope.E4).toMatchObject({ status: 'processed' });
  for (const item of mailItems) {
    const scans = item.scans as { file_id: string }[];
    expect(scans).toHaveLength(1);
    expect(scans[0]!.file_id).toMatch(/^file_/);
    // One item read alone is the same.
    expect((await get(`/v1/mail_items/${String(item.id)}`)).body).toEqual(item);
  }
  // The scan of E1 holds its five images, in the index's order.
  const e1Images = await db
    .selectFrom('mail_item_scans')
    .innerJoin('scan_images', 'scan_images.file_id', 'mail_item_scans.file_id')
    .select(['scan_images.position', 'scan_images.storage_key'])
    .where('mail_item_scans.mail_item_id', '=', byEnvelope.E1!.id as string)
    .execute();
  expect(e1Images).toHaveLength(5);
  const reviewOnly = await get('/v1/mail_items?status.in=needs_review,rejected');
  expect(
    results(reviewOnly.body)
      .map((i) => i.id)
      .sort(),
  ).toEqual([byEnvelope.E2!.id, byEnvelope.E3!.id].sort());

  const depositList = await get(`/v1/deposits?payment_source_id=${input.paymentSourceId}`);
  expect(depositList.status).toBe(200);
  const deposits = results(depositList.body);
  expect(deposits.map((d) => (d.transfer as Body).amount).sort((a, b) => Number(a) - Number(b))).toEqual(
    [CHECKS.E4[0], CHECKS.E1[0] + CHECKS.E1[1]].sort((a, b) => a - b),
  );
  const donations: Body[] = [];
  for (const deposit of deposits) {
    expect(deposit).toMatchObject({ status: 'complete', payment_source_id: input.paymentSourceId });
    expect(deposit.transfer).toMatchObject({ currency: 'USD', check_deposit: expect.any(Object) });
    const listed = await get(`/v1/donations?deposit_id=${String(deposit.id)}`);
    expect(listed.status).toBe(200);
    const ofDeposit = results(listed.body);
    for (const donation of ofDeposit) {
      expect(donation).toMatchObject({
        payment_source_id: input.paymentSourceId,
        amount_fee: 0,
        settlement: { deposit_id: deposit.id },
      });
      expect(donation.amount_net).toBe(donation.amount_gross);
    }
    // The deposit is the sum of its checks.
    expect(ofDeposit.reduce((sum, d) => sum + (d.amount_gross as number), 0)).toBe((deposit.transfer as Body).amount);
    donations.push(...ofDeposit);
  }
  expect(donations.map((d) => d.amount_gross).sort((a, b) => Number(a) - Number(b))).toEqual(
    [...CHECKS.E1, ...CHECKS.E4].sort((a, b) => a - b),
  );
  const accountIds = new Set(deposits.map((d) => (d.transfer as Body).financial_account_id));
  const { accountId, current } = await processingBalance(server, nonprofit);
  expect([...accountIds]).toEqual([accountId]);
  expect(current - input.balanceBefore).toBe(CHECKS_TOTAL);
  expect(await verifyLedger(db)).toMatchObject({ ok: true });

  const events = async (category: string) => results((await get(`/v1/events?category=${category}`)).body);
  expect((await events('donation.created')).map((e) => e.associated_object_id).sort()).toEqual(donations.map((d) => d.id).sort());
  expect((await events('deposit.created')).map((e) => e.associated_object_id).sort()).toEqual(deposits.map((d) => d.id).sort());
  return { mailItems, byEnvelope, deposits, donations };
}

/** Counts of what a batch makes, straight from the tables: a duplicate adds none of them. */
export async function giftCounts(db: Db, organizationId: string) {
  const count = async (table: 'mail_items' | 'donations' | 'deposits') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .where('organization_id', '=', organizationId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const scans = Number(
    (
      await db
        .selectFrom('mail_item_scans')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
  return { mailItems: await count('mail_items'), donations: await count('donations'), deposits: await count('deposits'), scans };
}

/**
 * A member of the nonprofit signs in to the sandbox dashboard: the Mail page lists the batch's
 * envelopes, E1's page its five images by label, and each image's signed URL answers an image
 * sharp decodes.
 */
export async function expectMemberSeesScans(server: OAuthTestServer, staff: Staff, seen: SeenGifts): Promise<void> {
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
}
