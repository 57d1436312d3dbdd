/**
 * Attack: a webhook receiver (any fund provider can subscribe any URL) stalls its delivery —
 * it trickles its answer a byte at a time, promises a body it never sends and hangs up, never
 * answers at all, or streams an endless body — to hold the dispatcher, so that every other
 * subscription's deliveries stop, leases are never reclaimed and SIGTERM never completes.
 * Protection: each attempt has an overall deadline (connect, headers and body) that destroys
 * the socket, the body read is capped, every way a response can end settles the attempt;
 * attempts run independently in a bounded pool (a freed slot takes the next due delivery at
 * once); a claim's lease outlasts its deadline and a late outcome never overwrites a newer
 * claim; shutdown waits at most shutdown_grace_seconds, then aborts attempts in flight and
 * gives them back, still due.
 */
import net from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { prefixedId } from '../../src/db/ids.js';
import { leaseSecondsFor, WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { emitEvent, type EventCategory } from '../../src/webhooks/outbox.js';
import { generateSigningSecret } from '../../src/webhooks/signing-secret.js';
import { TEST_SECRETS_KEY, testBox } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { makeDataDir, removeDataDir, startServer, type ServerProcess } from '../helpers/process.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

type Behaviour =
  /** Answers 200 with a long Content-Length, then one body byte a second. */
  | 'trickle'
  /** Answers 200 with Content-Length: 1000, sends a few bytes, and closes. */
  | 'short-body'
  /** Reads the request and never answers, holding the socket. */
  | 'silent'
  /** Answers 200 and streams a chunked body for as long as it is read. */
  | 'endless'
  /** Silent on its first connection, 204 on later ones. */
  | 'silent-once';

/** A raw TCP receiver that misbehaves on purpose and reports what it holds. */
async function startStaller(behaviour: Behaviour) {
  const sockets = new Set<net.Socket>();
  let requests = 0;
  let bytesSent = 0;
  const server = net.createServer((socket) => {
    sockets.add(socket);
    const timers: NodeJS.Timeout[] = [];
    socket.on('error', () => undefined);
    socket.on('close', () => {
      sockets.delete(socket);
      timers.forEach(clearInterval);
    });
    let seen = '';
    let answered = false;
    socket.on('data', (chunk: Buffer) => {
      seen += chunk.toString('latin1');
      if (answered || !seen.includes('\r\n\r\n')) return;
      answered = true;
      requests += 1;
      const send = (text: string | Buffer) => {
        bytesSent += text.length;
        return socket.write(text);
      };
      if (behaviour === 'trickle') {
        send('HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n');
        timers.push(setInterval(() => send('x'), 1000));
      } else if (behaviour === 'short-body') {
        send('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\npartial');
        socket.end();
      } else if (behaviour === 'endless') {
        send('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
        const chunk = Buffer.from(`4000\r\n${'y'.repeat(0x4000)}\r\n`);
        const pump = () => {
          while (!socket.destroyed && send(chunk));
        };
        socket.on('drain', pump);
        pump();
      } else if (behaviour === 'silent-once' && requests > 1) {
        send('HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n');
        socket.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    /** Connections still open (the receiver holds them; it never closes first unless it says so). */
    get held() {
      return sockets.size;
    },
    /** Requests whose headers arrived. */
    get requests() {
      return requests;
    },
    get bytesSent() {
      return bytesSent;
    },
    /** Drops every connection it holds (the receiver hangs up). */
    hangUp() {
      for (const socket of sockets) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

let t: TestDatabase;
let orgId: string;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  t = await createTestDatabase();
  orgId = (await addOrganization(t.db, { ein: '98-5551302', name: 'Stall Fund', kind: 'fund_provider' })).id;
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await t.db.deleteFrom('webhook_deliveries').execute();
  await t.db.deleteFrom('event_subscriptions').execute();
});
afterAll(async () => t?.drop());

async function staller(behaviour: Behaviour) {
  const receiver = await startStaller(behaviour);
  cleanups.push(receiver.close);
  return receiver;
}

async function subscribe(url: string, category: EventCategory = 'donor_account.created') {
  const id = prefixedId('evtsub');
  await t.db
    .insertInto('event_subscriptions')
    .values({ id, environment: 'sandbox', organization_id: orgId, url, category, signing_secret: testBox.seal(generateSigningSecret()) })
    .execute();
  return id;
}

async function emit(category: EventCategory = 'donor_account.created') {
  const objectType = category.startsWith('grant_request') ? 'grant_request' : 'donor_account';
  return t.db
    .transaction()
    .execute((trx) =>
      emitEvent(trx, { environment: 'sandbox', organizationId: orgId, category, objectId: `${objectType}_${prefixedId('x')}`, objectType }),
    );
}

async function deliveryOf(subscription: string) {
  return t.db.selectFrom('webhook_deliveries').selectAll().where('subscription_id', '=', subscription).executeTakeFirstOrThrow();
}

function dispatcher(options: Partial<ConstructorParameters<typeof WebhookDispatcher>[0]> = {}) {
  const created = new WebhookDispatcher({ db: t.db, box: testBox, retrySeconds: [3600], timeoutMs: 60_000, profile: 'dev', ...options });
  cleanups.push(() => created.stop(0));
  return created;
}

describe('a stalling receiver', () => {
  it('does not delay another subscription: its delivery arrives while the stallers still hold their sockets', async () => {
    const trickle = await staller('trickle');
    const short = await staller('short-body');
    const silent = await staller('silent');
    const healthy = await startReceiver();
    cleanups.push(healthy.close);
    const stalled = [await subscribe(trickle.url), await subscribe(short.url), await subscribe(silent.url)];
    const healthySubscription = await subscribe(healthy.url, 'grant_request.created');
    // The deadline (60 s) is far away: only independence can get the healthy delivery through.
    const running = dispatcher();
    running.start(50);
    await emit('donor_account.created');
    await expect.poll(() => [trickle.requests, short.requests, silent.requests], { timeout: 20_000 }).toEqual([1, 1, 1]);
    await expect.poll(() => trickle.bytesSent > 0 && trickle.held === 1 && silent.held === 1, { timeout: 20_000 }).toBe(true);

    const event = await emit('grant_request.created');
    await expect.poll(() => healthy.received.map((hook) => hook.headers['webhook-id']), { timeout: 10_000 }).toEqual([event]);
    // The stalling receivers were connected all along.
    expect([trickle.held, silent.held]).toEqual([1, 1]);
    await expect.poll(async () => (await deliveryOf(healthySubscription)).status).toBe('succeeded');
    // The hang-up after a short body was recorded as a failed attempt, to be retried.
    expect(await deliveryOf(stalled[1]!)).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_status: 200,
      last_error: 'HTTP 200: the response ended before its body was complete',
    });

    // Stopping with no grace aborts the two still in flight and gives them back, still due.
    await running.stop(0);
    for (const id of [stalled[0]!, stalled[2]!]) {
      expect(await deliveryOf(id)).toMatchObject({
        status: 'pending',
        attempts: 0,
        locked_until: null,
        last_error: 'interrupted: the server shut down during the attempt',
      });
    }
    await expect.poll(() => [trickle.held, silent.held]).toEqual([0, 0]);
  });

  it('holds one slot of a bounded pool, and a slot that frees takes the next due delivery at once', async () => {
    const receivers = [await staller('silent'), await staller('silent'), await staller('silent')];
    for (const receiver of receivers) await subscribe(receiver.url);
    await emit();
    const pool = dispatcher({ concurrency: 2 });
    pool.start(600_000); // the next poll is far away: only a freed slot can start the third delivery
    void pool.runOnce();
    const requests = () => receivers.map((receiver) => receiver.requests);
    await expect.poll(() => requests().reduce((a, b) => a + b), { timeout: 20_000 }).toBe(2);
    // With both slots taken, a claim pass takes nothing: the third delivery stays queued.
    expect(await pool.runOnce()).toBe(0);
    expect(pool.active).toBe(2);
    const waiting = requests().indexOf(0);
    const queued = await t.db.selectFrom('webhook_deliveries').select(['attempts', 'locked_until']).where('attempts', '=', 0).execute();
    expect(queued).toEqual([{ attempts: 0, locked_until: null }]);

    // One stalled receiver hangs up: its attempt fails, the slot frees, the third is sent.
    receivers.find((receiver) => receiver.requests === 1)!.hangUp();
    await expect.poll(() => receivers[waiting]!.requests, { timeout: 10_000 }).toBe(1);
    expect(pool.active).toBe(2);
  });

  it('is cut off at the attempt deadline, and every way of ending an answer settles the attempt', async () => {
    const trickle = await staller('trickle');
    const short = await staller('short-body');
    const silent = await staller('silent');
    const ids = [await subscribe(trickle.url), await subscribe(short.url), await subscribe(silent.url)];
    await emit();
    // Before the fix the trickle kept a socket idle timeout from ever firing and this never returned.
    expect(await dispatcher({ timeoutMs: 1500 }).runOnce()).toBe(3);
    expect(await deliveryOf(ids[0]!)).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_status: 200,
      last_error: 'timed out after 1500 ms',
    });
    expect(await deliveryOf(ids[1]!)).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_status: 200,
      last_error: 'HTTP 200: the response ended before its body was complete',
    });
    expect(await deliveryOf(ids[2]!)).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_status: null,
      last_error: 'timed out after 1500 ms',
    });
    // The dispatcher closed the connections the receivers meant to hold.
    await expect.poll(() => [trickle.held, silent.held]).toEqual([0, 0]);
  });

  it('streaming an endless body is read only up to the cap: the status decides, the connection is closed', async () => {
    const endless = await staller('endless');
    const id = await subscribe(endless.url);
    await emit();
    expect(await dispatcher().runOnce()).toBe(1);
    expect(await deliveryOf(id)).toMatchObject({ status: 'succeeded', attempts: 1, last_status: 200 });
    await expect.poll(() => endless.held).toBe(0);
  });
});

describe('leases', () => {
  it('outlast the attempt deadline, are then reclaimed by another dispatcher, and a late outcome is dropped', async () => {
    const receiver = await staller('silent-once');
    const id = await subscribe(receiver.url);
    await emit();
    let now = Date.parse('2027-03-01T00:00:00Z');
    const clock = () => new Date(now);
    const crashed = dispatcher({ now: clock });
    const stuck = crashed.runOnce();
    await expect.poll(() => receiver.requests, { timeout: 20_000 }).toBe(1);

    const other = dispatcher({ now: clock });
    now += 60_000; // the first attempt's deadline: it may still be legitimately in flight
    expect(await other.runOnce()).toBe(0);
    now = Date.parse('2027-03-01T00:00:00Z') + leaseSecondsFor(60_000) * 1000;
    expect(await other.runOnce()).toBe(1);
    expect(await deliveryOf(id)).toMatchObject({ status: 'succeeded', attempts: 2, last_status: 204 });

    // The first claim's attempt ends late (aborted here); it must not overwrite the newer outcome.
    await crashed.stop(0);
    await stuck;
    expect(await deliveryOf(id)).toMatchObject({ status: 'succeeded', attempts: 2, last_status: 204 });
  });
});

describe('the server process', () => {
  it('exits on SIGTERM within shutdown_grace_seconds while receivers hold connections, giving their attempts back', async () => {
    const dataDir = makeDataDir();
    cleanups.push(() => removeDataDir(dataDir));
    const trickle = await staller('trickle');
    const silent = await staller('silent');
    const healthy = await startReceiver();
    cleanups.push(healthy.close);
    const stalled = [await subscribe(trickle.url), await subscribe(silent.url)];
    await subscribe(healthy.url, 'grant_request.created');
    const server: ServerProcess = await startServer({
      env: {
        DATABASE_URL: t.url,
        ALMONER_DATA_DIR: dataDir,
        ALMONER_CLIENTS_FILE: path.join(dataDir, 'clients.json'),
        ALMONER_DEMO_DATA: 'false',
        ALMONER_SECRETS_KEY: TEST_SECRETS_KEY,
        ALMONER_WEBHOOK_POLL_MS: '50',
        // The attempt deadline is far beyond the grace: only the grace can end these attempts.
        ALMONER_WEBHOOK_TIMEOUT_MS: '60000',
        ALMONER_SHUTDOWN_GRACE_SECONDS: '1',
      },
    });
    cleanups.push(() => server.kill());
    await emit('donor_account.created');
    await emit('grant_request.created');
    await expect.poll(() => healthy.received.length, { timeout: 20_000 }).toBe(1);
    await expect.poll(() => [trickle.requests, trickle.held, silent.requests, silent.held], { timeout: 20_000 }).toEqual([1, 1, 1, 1]);

    const status = await server.stop('SIGTERM', 30_000);
    expect(status, server.output()).toEqual({ code: 0, signal: null });
    for (const id of stalled) {
      expect(await deliveryOf(id)).toMatchObject({
        status: 'pending',
        attempts: 0,
        locked_until: null,
        last_error: 'interrupted: the server shut down during the attempt',
      });
    }
  }, 90_000);
});
