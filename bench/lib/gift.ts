import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { sql } from 'kysely';
import sharp from 'sharp';
import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import type { Db } from '../../src/db/database.js';
import { prefixedId } from '../../src/db/ids.js';
import { encodeCursor } from '../../src/gateway/routing/pagination.js';
import { createTestLockbox, type TestLockbox } from '../../test/helpers/gift.js';
import { FolderStorage } from '../../src/storage/folder-storage.js';
import { buildMailBatch, checkLine, createMailBatch, type IndexRow } from '../../test/helpers/mail-batch.js';
import type { HttpRequestSpec } from './load.js';
import { cleanEnv, NodeProcess, rssBytes, RssSampler, sleep } from './processes.js';

/**
 * The gift-processing lists scenario's rows (docs/benchmarks.md, "Gift processing"): a lockbox
 * of a bench lockbox provider for the nonprofit under test, one ingested batch, and `count`
 * mail items (each with one scan) and `count` deposits (each a check deposit), written as rows,
 * as ingestion writes them; ids shaped as Almoner's, created over the last `count` minutes.
 */
export async function seedGiftRecords(db: Db, nonprofitId: string, providerEin: string, count: number): Promise<TestLockbox> {
  const provider = await addOrganization(db, { ein: providerEin, name: `Bench Lockbox Provider ${providerEin}`, kind: 'lockbox_provider' });
  const lockbox = await createTestLockbox(db, { nonprofitId, providerId: provider.id });
  const batchId = prefixedId('batch');
  await createBenchUlid(db);
  await sql`insert into mail_batches (id, environment, provider_organization_id, lockbox_id, storage_key, upload_expires_at, status, size_bytes, sha256, uploaded_at, ingested_at)
    values (${batchId}, 'sandbox', ${provider.id}::uuid, ${lockbox.id}, ${`batches/${batchId}.zip`}, now(), 'ingested', 1, repeat('0', 64), now(), now())`.execute(
    db,
  );
  await sql`insert into mail_items (id, environment, organization_id, lockbox_id, batch_id, envelope_id, status, received_at, created_at, updated_at)
    select 'mail_' || bench_ulid(), 'sandbox', ${nonprofitId}::uuid, ${lockbox.id}, ${batchId}, 'env-' || n,
           (array['processed','processed','processed','needs_review','rejected'])[1 + n % 5],
           now() - make_interval(mins => n), now() - make_interval(mins => n), now() - make_interval(mins => n)
      from generate_series(1, ${count}) as n`.execute(db);
  await sql`insert into mail_item_scans (file_id, mail_item_id, batch_id, digest, created_at)
    select 'file_' || bench_ulid(), id, batch_id, encode(sha256(id::bytea), 'hex'), created_at
      from mail_items where batch_id = ${batchId}`.execute(db);
  await sql`insert into deposits (id, environment, organization_id, payment_source_id, financial_account_id, status, amount, rail, rail_details, settled_at, bank_created_at, created_at, updated_at)
    select 'deposit_' || bench_ulid(), 'sandbox', ${nonprofitId}::uuid, ${lockbox.paymentSourceId}, ${lockbox.financialAccountId}, 'complete',
           2500 + (n % 400) * 100, 'check_deposit',
           jsonb_build_object('status', 'deposited', 'submitted_at', to_char((now() - make_interval(mins => n)) at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')),
           now() - make_interval(mins => n), now() - make_interval(mins => n), now() - make_interval(mins => n), now() - make_interval(mins => n)
      from generate_series(1, ${count}) as n`.execute(db);
  return lockbox;
}

/** bench_ulid(): 26 random Crockford base32 characters, as Almoner's ids have (their time part does not matter here). */
async function createBenchUlid(db: Db): Promise<void> {
  await sql`create or replace function bench_ulid() returns text language sql volatile as $$
    select string_agg(substr('0123456789abcdefghjkmnpqrstvwxyz', 1 + floor(random() * 32)::int, 1), '')
      from generate_series(1, 26) $$`.execute(db);
}

/** Page tokens of `table` (the gateway's cursor format) at random places of the nonprofit's rows. */
export async function giftPageTokens(db: Db, table: 'mail_items' | 'deposits', organizationId: string, n: number): Promise<string[]> {
  const { rows } = await sql<{ created_at: Date; id: string }>`select created_at, id from ${sql.table(table)}
    where organization_id = ${organizationId} and environment = 'sandbox' order by random() limit ${n}`.execute(db);
  return rows.map((row) => encodeCursor({ createdAt: row.created_at, id: row.id }));
}

/** The gift_lists requests of one list: pages from random page tokens (now and then the first page), access tokens rotated. */
export function giftListRequests(path: string, pageTokens: readonly string[], accessTokens: readonly string[] = []): () => HttpRequestSpec {
  let page = 0;
  let k = 0;
  return (): HttpRequestSpec => {
    page = (page + 1) % (pageTokens.length + 1);
    k += 1;
    return {
      method: 'GET',
      path: page === pageTokens.length ? path : `${path}?page_token=${pageTokens[page]}`,
      headers: accessTokens.length ? { authorization: `Bearer ${accessTokens[k % accessTokens.length]!}` } : ({} as Record<string, string>),
    };
  };
}

/** A bench lockbox provider with a sandbox API key, and a lockbox of it for the nonprofit (the ingest and upload scenarios). */
export async function benchProvider(db: Db, nonprofitId: string, ein: string) {
  const provider = await addOrganization(db, { ein, name: `Bench Lockbox Provider ${ein}`, kind: 'lockbox_provider' });
  const lockbox = await createTestLockbox(db, { nonprofitId, providerId: provider.id });
  const { key } = await createApiKey(db, { org: ein, environment: 'sandbox' });
  return { providerId: provider.id, apiKey: key, lockbox };
}

/** Distinct pictures made for the ingest batch's 1,000 image entries (each fronts or backs many envelopes). */
const PICTURES = 25;

/** A scan-sized TIFF (grey, 1,000 × 450, a paper's grain, JPEG-compressed as check scanners write them: about 50–100 KB). */
function scanPicture(text: string): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1000" height="450">
    <rect x="10" y="10" width="980" height="430" fill="none" stroke="#1d3b6a" stroke-width="5"/>
    <text x="500" y="240" font-family="sans-serif" font-size="90" text-anchor="middle">${text}</text></svg>`;
  return sharp({
    create: { width: 1000, height: 450, channels: 3, background: '#f4f1e6', noise: { type: 'gaussian', mean: 205, sigma: 12 } },
  })
    .composite([{ input: Buffer.from(svg) }])
    .grayscale()
    .tiff({ compression: 'jpeg', quality: 70 })
    .toBuffer();
}

/** The ingest scenario's batch: `envelopes` envelopes, each one check with a front and a back TIFF (test/helpers/mail-batch.ts's builders). */
export async function buildScanBatch(envelopes: number): Promise<{ zip: Buffer; images: number; imageBytes: number; totalCents: number }> {
  const fronts = await Promise.all(Array.from({ length: PICTURES }, (_, i) => scanPicture(`PAY $${i + 25}.00`)));
  const backs = await Promise.all(Array.from({ length: PICTURES }, (_, i) => scanPicture(`ENDORSE ${i}`)));
  const lines: IndexRow[] = [];
  const images: Record<string, Buffer> = {};
  let totalCents = 0;
  for (let i = 0; i < envelopes; i += 1) {
    const front = `scans/${i}-front.tif`;
    const back = `scans/${i}-back.tif`;
    images[front] = fronts[i % PICTURES]!;
    images[back] = backs[i % PICTURES]!;
    totalCents += (25 + (i % PICTURES)) * 100;
    lines.push(checkLine(`bench-${i}`, `${25 + (i % PICTURES)}.00`, front, { back_image: back, check_number: String(1000 + i) }));
  }
  const imageBytes = Object.values(images).reduce((sum, b) => sum + b.length, 0);
  return { zip: await buildMailBatch(lines, images), images: envelopes * 2, imageBytes, totalCents };
}

export interface IngestResult {
  ms: number;
  outcome: string;
  refusal: string | null;
  passes: number;
  rssBeforeMb: number;
  peakRssMb: number;
  highWaterMb: number | null;
}

/**
 * The gift_ingest scenario: the batch's ZIP put in a folder storage of its own and its row
 * awaiting its upload (as an upload leaves it), then bench/lib/ingest-child.ts ingests it in its
 * own process; returns what the child reports and what the database then holds.
 */
export async function ingestInChild(
  db: Db,
  options: { databaseUrl: string; lockbox: TestLockbox; providerId: string; zip: Buffer },
): Promise<
  IngestResult & { peakMb: number; counts: { mailItems: number; donations: number; deposits: number; scans: number; storedImages: number } }
> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'almoner-bench-ingest-'));
  try {
    const batch = await createMailBatch(db, options.lockbox, options.providerId);
    await new FolderStorage(dir).put(batch.storageKey, options.zip);
    const child = new NodeProcess(
      'bench/lib/ingest-child.ts',
      cleanEnv({ DATABASE_URL: options.databaseUrl, STORAGE_DIR: dir, BATCH_ID: batch.id }),
    );
    const { ingest } = await child.waitForJsonLine<{ ingest: IngestResult }>('ingest', 660_000);
    await child.exited;
    const count = async (query: Promise<{ n: string | number | bigint }>) => Number((await query).n);
    const items = db.selectFrom('mail_items').select('id').where('batch_id', '=', batch.id);
    const counts = {
      mailItems: await count(
        db.selectFrom('mail_items').select(db.fn.countAll().as('n')).where('batch_id', '=', batch.id).executeTakeFirstOrThrow(),
      ),
      donations: await count(
        db.selectFrom('donations').select(db.fn.countAll().as('n')).where('mail_item_id', 'in', items).executeTakeFirstOrThrow(),
      ),
      deposits: await count(
        db.selectFrom('deposits').select(db.fn.countAll().as('n')).where('mail_item_id', 'in', items).executeTakeFirstOrThrow(),
      ),
      scans: await count(
        db.selectFrom('mail_item_scans').select(db.fn.countAll().as('n')).where('batch_id', '=', batch.id).executeTakeFirstOrThrow(),
      ),
      storedImages: fs.existsSync(path.join(dir, 'scans', batch.id)) ? fs.readdirSync(path.join(dir, 'scans', batch.id)).length : 0,
    };
    // The kernel's high-water mark, reset at the clock's start, is the true peak (the sampler's timer can miss a spike).
    const peakMb = Math.max(ingest.highWaterMb ?? 0, ingest.peakRssMb);
    return { ...ingest, peakMb, counts };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The gift_upload scenario: an upload URL from POST /v1/mailbox/upload_url (the provider's API
 * key), then one PUT of `bytes` generated on the fly (1 MiB of random bytes, again and again:
 * not a ZIP, which the upload route does not look at) with its Content-Length. The server's
 * RSS is read before and sampled every 20 ms until the answer. Afterwards the server's own
 * ingestor refuses the batch (not a ZIP); the harness waits for that, so the next scenario
 * does not share the server with it.
 */
export async function uploadBatch(
  db: Db,
  options: { origin: string; pid: number; apiKey: string; locationId: string; bytes: number; log: (line: string) => void },
): Promise<{ status: number; seconds: number; mbPerSecond: number; rssBeforeMb: number; peakRssMb: number; afterwards: string }> {
  const answer = await fetch(`${options.origin}/v1/mailbox/upload_url`, {
    method: 'POST',
    headers: { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ location_id: options.locationId }),
  });
  const { url } = (await answer.json()) as { url?: string };
  if (!url) throw new Error(`no upload URL: ${answer.status}`);
  const batchId = new URL(url).pathname.split('/').at(-1)!;
  const chunk = crypto.randomBytes(1 << 20);
  const rssBeforeMb = Math.round(((rssBytes(options.pid) ?? 0) / 1048576) * 10) / 10;
  const sampler = new RssSampler(options.pid, false, 20);
  const t0 = performance.now();
  const status = await new Promise<number>((resolve, reject) => {
    const request = http.request(url, { method: 'PUT', agent: false, headers: { 'content-length': String(options.bytes) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    request.on('error', reject);
    let sent = 0;
    const write = () => {
      while (sent < options.bytes) {
        const piece = chunk.subarray(0, Math.min(chunk.length, options.bytes - sent));
        sent += piece.length;
        if (!request.write(piece)) return void request.once('drain', write);
      }
      request.end();
    };
    write();
  });
  const seconds = (performance.now() - t0) / 1000;
  const peakRssMb = sampler.stop();
  // The server's ingestor (every 5 s) reads the batch and refuses it: wait for it, at most 2 minutes.
  let afterwards = 'still uploaded after 2 minutes';
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(500)) {
    const row = await db.selectFrom('mail_batches').select(['status', 'refusal_reason']).where('id', '=', batchId).executeTakeFirst();
    if (row && row.status !== 'uploaded' && row.status !== 'awaiting_upload') {
      afterwards = `${row.status}${row.refusal_reason ? ` (${row.refusal_reason})` : ''}`;
      break;
    }
  }
  options.log(`    the server's ingestor then: ${afterwards}`);
  return { status, seconds, mbPerSecond: options.bytes / 1048576 / seconds, rssBeforeMb, peakRssMb, afterwards };
}

/** Two JSON texts with the same value (members in any order). */
export function sameJson(a: string, b: string): boolean {
  try {
    return isDeepStrictEqual(JSON.parse(a), JSON.parse(b));
  } catch {
    return false;
  }
}
