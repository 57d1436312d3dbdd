import http from 'node:http';
import net from 'node:net';
import { text } from 'node:stream/consumers';
import { beforeAll, describe, expect, it } from 'vitest';
import type { FolderStorage } from '../../src/storage/folder-storage.js';
import type { UploadSigner } from '../../src/storage/upload-signing.js';
import { apiRequest } from '../helpers/gateway.js';
import { giftParties } from '../helpers/gift.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/** A lockbox provider's upload URL and the folder storage's upload route (docs/gift-processing.md, "Object storage"). */

const MAX_BYTES = 4 * 1024 * 1024;
const { testDatabase: t, server } = useOAuthServer({ staff: 0, config: { mail_batch_max_bytes: MAX_BYTES } });
let parties: Awaited<ReturnType<typeof giftParties>>;
let others: Awaited<ReturnType<typeof giftParties>>;
let storage: FolderStorage;
let signer: UploadSigner;

beforeAll(async () => {
  parties = await giftParties(t.db);
  others = await giftParties(t.db);
  storage = server.runtime.storage as FolderStorage;
  signer = storage.signer as UploadSigner;
});

function uploadUrl(bearer: string, json: unknown, environment: 'sandbox' | 'production' = 'sandbox') {
  return apiRequest(server, environment, 'POST', '/v1/mailbox/upload_url', { bearer, json });
}

/** A fresh batch of the test provider's sandbox lockbox: its id and upload URL. */
async function newBatch(): Promise<{ id: string; url: URL }> {
  const answer = await uploadUrl(parties.provider.sandbox, { location_id: parties.lockbox.locationId });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  const url = new URL(answer.body.url as string);
  return { id: url.pathname.split('/').at(-1)!, url };
}

function batchRow(id: string) {
  return t.db.selectFrom('mail_batches').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

async function put(url: URL | string, body: Buffer | string) {
  const answer = await fetch(url, { method: 'PUT', body });
  return { status: answer.status, type: answer.headers.get('content-type'), body: (await answer.json()) as Record<string, unknown> };
}

/** A PUT whose body is sent chunked (no Content-Length), `chunks` of `size` bytes. */
function putChunked(url: URL, chunks: number, size: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'PUT', agent: false }, (answer) => {
      void text(answer).then((body) => resolve({ status: answer.statusCode ?? 0, body }), reject);
    });
    // The server may answer (413) and close before the whole body is written: its answer still counts.
    request.on('error', (error) => setTimeout(() => reject(error), 1000));
    let sent = 0;
    const write = () => {
      while (sent < chunks) {
        sent += 1;
        if (!request.write(Buffer.alloc(size, sent % 256))) return void request.once('drain', write);
      }
      request.end();
    };
    write();
  });
}

/**
 * A PUT whose Content-Length says `declared` and whose body is `sent` bytes; then the client's
 * half of the connection closes (`end`), or stays open: the answer is what came back before the
 * server closed.
 */
function putRaw(url: URL, declared: number, sent: number, end = true): Promise<string> {
  return new Promise((resolve) => {
    let answer = '';
    const socket = net.connect(Number(url.port), url.hostname, () => {
      socket.write(`PUT ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Length: ${declared}\r\n\r\n`);
      if (end) socket.end(Buffer.alloc(sent, 1));
      else socket.write(Buffer.alloc(sent, 1));
    });
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('error', () => resolve(answer));
    socket.on('close', () => resolve(answer));
  });
}

const batchIdOf = (url: URL) => url.pathname.split('/').at(-1)!;

/** A chunked PUT left open after its first chunk: `finish()` sends the rest and gives the answer. */
async function putHeld(url: URL): Promise<{ finish(): Promise<{ status: number; body: string }> }> {
  const request = http.request(url, { method: 'PUT', agent: false });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    request.on('response', (response: http.IncomingMessage) => {
      void text(response).then((body) => resolve({ status: response.statusCode ?? 0, body }), reject);
    });
    request.on('error', reject);
  });
  request.write(Buffer.alloc(1024, 1));
  // The server holds the batch (its claim, lease_until) once it has the request.
  await expect.poll(async () => (await batchRow(batchIdOf(url))).lease_until, { timeout: 5000 }).not.toBeNull();
  return {
    finish() {
      request.end(Buffer.alloc(1024, 2));
      return answer;
    },
  };
}

describe('POST /v1/mailbox/upload_url', () => {
  it('makes an awaiting batch of the lockbox and answers a URL on the API host that works for 15 minutes', async () => {
    const before = Math.floor(Date.now() / 1000);
    const answer = await uploadUrl(parties.provider.sandbox, { location_id: parties.lockbox.locationId });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(Object.keys(answer.body)).toEqual(['url']);
    const url = new URL(answer.body.url as string);
    expect(url.origin).toBe(server.urls.sandboxApi);
    expect(url.pathname).toMatch(/^\/v1\/mailbox\/uploads\/batch_[0-9a-z]{26}$/);
    const expires = Number(url.searchParams.get('expires'));
    expect(expires - before).toBeGreaterThanOrEqual(900);
    expect(expires - before).toBeLessThanOrEqual(902);
    expect(url.searchParams.get('signature')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const id = url.pathname.split('/').at(-1)!;
    const row = await batchRow(id);
    expect(row).toMatchObject({
      status: 'awaiting_upload',
      storage_key: `batches/${id}.zip`,
      lockbox_id: parties.lockbox.id,
      provider_organization_id: parties.provider.id,
      environment: 'sandbox',
      size_bytes: null,
      uploaded_at: null,
    });
    expect(Math.abs(row.upload_expires_at.getTime() / 1000 - expires)).toBeLessThanOrEqual(1);
    // What the URL encodes holds for 15 minutes and no longer.
    const signature = url.searchParams.get('signature');
    const at = (seconds: number) => signer.verify('PUT', url.pathname, String(expires), signature, (before + seconds) * 1000);
    expect(at(14 * 60 + 58)).toEqual({ ok: true });
    expect(at(15 * 60 + 3)).toEqual({ ok: false, reason: 'expired' });
    // Each call makes a batch of its own.
    const again = await uploadUrl(parties.provider.sandbox, { location_id: parties.lockbox.locationId });
    expect(again.body.url).not.toBe(answer.body.url);
  });

  it('refuses a location_id that is not po_<number> (400)', async () => {
    for (const location_id of ['543', 'po_', 'po_12a', 'box_543', 7]) {
      const answer = await uploadUrl(parties.provider.sandbox, { location_id });
      expect(answer.status, String(location_id)).toBe(400);
      expect(answer.body.detail).toMatch(/location_id/);
    }
    expect((await uploadUrl(parties.provider.sandbox, {})).status).toBe(400);
  });

  it("refuses another provider's lockbox, and a lockbox of the other environment (400), making no batch", async () => {
    const count = async () => (await t.db.selectFrom('mail_batches').select('id').execute()).length;
    const before = await count();
    const theirs = await uploadUrl(parties.provider.sandbox, { location_id: others.lockbox.locationId });
    expect(theirs.status).toBe(400);
    expect(theirs.body.detail).toMatch(/is not one of your lockboxes in the sandbox environment/);
    const production = await uploadUrl(parties.provider.production, { location_id: parties.lockbox.locationId }, 'production');
    expect(production.status).toBe(400);
    expect(production.body.detail).toMatch(/production environment/);
    expect(await count()).toBe(before);
  });

  it("refuses a nonprofit's key (403): the operation is the lockbox provider's", async () => {
    const answer = await uploadUrl(parties.nonprofit.sandbox, { location_id: parties.lockbox.locationId });
    expect(answer.status).toBe(403);
    expect(answer.body.detail).toMatch(/lockbox providers/);
  });
});

describe('PUT /v1/mailbox/uploads/<batch_id>', () => {
  it('stores the body and marks the batch uploaded, with no API key; a second PUT is 409', async () => {
    const { id, url } = await newBatch();
    const answer = await put(url, 'PK\u0003\u0004 a zip');
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toEqual({ batch_id: id, status: 'uploaded', size_bytes: 10 });
    const row = await batchRow(id);
    expect(row).toMatchObject({ status: 'uploaded', size_bytes: '10', lease_until: null });
    expect(row.uploaded_at).toBeInstanceOf(Date);
    expect(await storage.head(`batches/${id}.zip`)).toEqual({ size: 10 });
    expect(await text(await storage.get(`batches/${id}.zip`))).toBe('PK\u0003\u0004 a zip');
    const second = await put(url, 'another body');
    expect(second.status).toBe(409);
    expect(second.type).toMatch(/application\/problem\+json/);
    expect(await text(await storage.get(`batches/${id}.zip`))).toBe('PK\u0003\u0004 a zip');
  });

  it('refuses a PUT while another is being received (409), and keeps nothing of one whose batch expired meanwhile', async () => {
    const first = await newBatch();
    const slow = await putHeld(first.url);
    const meanwhile = await put(first.url, 'second');
    expect(meanwhile.status).toBe(409);
    expect(meanwhile.body.detail).toMatch(/being uploaded by another request/);
    expect(await slow.finish()).toMatchObject({ status: 200 });
    expect(await storage.head(`batches/${first.id}.zip`)).toEqual({ size: 2048 });

    // The ingestion job gives up an awaiting batch past its expiry; an upload still running then keeps nothing.
    const second = await newBatch();
    const late = await putHeld(second.url);
    await t.db.updateTable('mail_batches').set({ status: 'expired' }).where('id', '=', second.id).execute();
    const answer = await late.finish();
    expect(answer.status).toBe(409);
    expect(answer.body).toMatch(/expired before its upload ended/);
    expect(await storage.head(`batches/${second.id}.zip`)).toBeUndefined();
  });

  it('refuses an expired URL and a tampered one (403, saying which), keeping nothing', async () => {
    const { id, url } = await newBatch();
    const expired = new URL(signer.sign(`batches/${id}.zip`, new Date(Date.now() - 1000), 'sandbox'));
    const late = await put(expired, 'late');
    expect(late.status).toBe(403);
    expect(late.body).toMatchObject({ status: 403, reason: 'expired' });
    expect(late.body.detail).toMatch(/expired/);
    const tampered = new URL(url);
    const signature = url.searchParams.get('signature')!;
    tampered.searchParams.set('signature', `${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`);
    const longer = new URL(url);
    longer.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 60));
    const unsigned = new URL(url.pathname, url.origin);
    for (const bad of [tampered, longer, unsigned]) {
      const answer = await put(bad, 'evil');
      expect(answer.status, bad.search).toBe(403);
      expect(answer.body).toMatchObject({ reason: 'signature' });
    }
    // Another batch's signature does not open this one.
    const other = await newBatch();
    const swapped = new URL(url);
    swapped.searchParams.set('signature', other.url.searchParams.get('signature')!);
    swapped.searchParams.set('expires', other.url.searchParams.get('expires')!);
    expect((await put(swapped, 'evil')).status).toBe(403);
    expect(await storage.head(`batches/${id}.zip`)).toBeUndefined();
    expect((await batchRow(id)).status).toBe('awaiting_upload');
  });

  it('refuses a body larger than mail_batch_max_bytes (413) whether it says so or not, keeping nothing', async () => {
    const { id, url } = await newBatch();
    const declared = await put(url, Buffer.alloc(MAX_BYTES + 1));
    expect(declared.status).toBe(413);
    expect(declared.body).toMatchObject({ status: 413, code: 'too_large' });
    const chunked = await putChunked(url, 80, 64 * 1024);
    expect(chunked.status).toBe(413);
    // A huge Content-Length is refused at once, and the connection closed rather than its body read and thrown away.
    const huge = await putRaw(url, 1024 * 1024 * 1024, 1024, false);
    expect(huge).toMatch(/^HTTP\/1\.1 413 /);
    expect(huge).toMatch(/\r\nConnection: close\r\n/i);
    expect(await storage.head(`batches/${id}.zip`)).toBeUndefined();
    expect((await batchRow(id)).status).toBe('awaiting_upload');
    // The batch still takes an upload of the allowed size.
    expect((await put(url, Buffer.alloc(MAX_BYTES, 9))).status).toBe(200);
    expect(await storage.head(`batches/${id}.zip`)).toEqual({ size: MAX_BYTES });
  });

  it('keeps nothing of a body shorter than its Content-Length', async () => {
    const { id, url } = await newBatch();
    const created = (await batchRow(id)).updated_at;
    const answer = await putRaw(url, 100_000, 30_000);
    // The body ended at the caller's close, short: a 400 (from Node's HTTP parser, which sees it first,
    // so the handler may not even have claimed the batch yet when the answer arrives).
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    // The server gives the batch back once it has seen the body stop: claimed (updated_at moved) and released.
    await expect
      .poll(
        async () => {
          const row = await batchRow(id);
          return row.updated_at > created && row.lease_until === null;
        },
        { timeout: 5000 },
      )
      .toBe(true);
    expect(await storage.head(`batches/${id}.zip`)).toBeUndefined();
    expect((await batchRow(id)).status).toBe('awaiting_upload');
    expect((await put(url, 'whole')).status).toBe(200);
  });

  it('streams a multi-megabyte body sent in chunks', async () => {
    const { id, url } = await newBatch();
    const answer = await putChunked(url, 48, 64 * 1024);
    expect(answer.status, answer.body).toBe(200);
    expect(await storage.head(`batches/${id}.zip`)).toEqual({ size: 48 * 64 * 1024 });
    const stored = Buffer.concat((await (await storage.get(`batches/${id}.zip`)).toArray()) as Buffer[]);
    expect(stored.subarray(64 * 1024, 64 * 1024 + 4)).toEqual(Buffer.alloc(4, 2));
    expect((await batchRow(id)).size_bytes).toBe(String(48 * 64 * 1024));
  });

  it("answers 404 on the other environment's API host, and for a batch id that does not exist", async () => {
    const { url } = await newBatch();
    const production = new URL(`${url.pathname}${url.search}`, server.urls.api);
    expect((await put(production, 'x')).status).toBe(404);
    const unknown = new URL(signer.sign('batches/batch_00000000000000000000000000.zip', new Date(Date.now() + 60_000), 'sandbox'));
    expect((await put(unknown, 'x')).status).toBe(404);
  });
});
