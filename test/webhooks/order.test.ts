import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { prefixedId } from '../../src/db/ids.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { emitEvent, type EventCategory } from '../../src/webhooks/outbox.js';
import { generateSigningSecret } from '../../src/webhooks/signing-secret.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { testBox } from '../helpers/app.js';

/**
 * One object's webhooks arrive in the order of its transitions (docs/api.md, "Webhooks"): a
 * delivery waits while one of an earlier event of the same object to the same URL is pending,
 * in flight or waiting for its retry; other objects' deliveries do not wait.
 */

let t: TestDatabase;
let orgId: string;
const receivers: Awaited<ReturnType<typeof startReceiver>>[] = [];

beforeAll(async () => {
  t = await createTestDatabase();
  orgId = (await addOrganization(t.db, { ein: '73-5550001', name: 'Order Foundation', kind: 'grantmaker' })).id;
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
  await t.db.deleteFrom('event_subscriptions').execute();
});
afterAll(async () => t?.drop());

async function subscribe(url: string, category: EventCategory) {
  await t.db
    .insertInto('event_subscriptions')
    .values({
      id: prefixedId('evtsub'),
      environment: 'sandbox',
      organization_id: orgId,
      url,
      category,
      signing_secret: testBox.seal(generateSigningSecret()),
    })
    .execute();
}

/** One transition of a disbursement: its event, in a transaction of its own, as the service writes it. */
function transition(objectId: string, category: EventCategory = 'disbursement.updated') {
  return t.db
    .transaction()
    .execute((trx) => emitEvent(trx, { environment: 'sandbox', organizationId: orgId, category, objectId, objectType: 'disbursement' }));
}

function clock(start = Date.parse('2027-03-01T00:00:00Z')) {
  let now = start;
  return { now: () => new Date(now), advance: (seconds: number) => void (now += seconds * 1000) };
}

/** The event ids the receiver got, in the order they arrived. */
const arrived = (receiver: Awaited<ReturnType<typeof startReceiver>>) => receiver.received.map((r) => r.headers['webhook-id']);

describe('webhook order', () => {
  it("holds an object's later transitions while its first delivery fails and waits for its retry; another object's go at once", async () => {
    let refused = false;
    let created = '';
    // The receiver refuses the first attempt of the disbursement's creation, and nothing else.
    const receiver = await startReceiver((hook) => (hook.headers['webhook-id'] === created && !refused ? ((refused = true), 500) : 204));
    receivers.push(receiver);
    await subscribe(receiver.url, 'disbursement.created');
    await subscribe(receiver.url, 'disbursement.updated');
    created = await transition('disbursement_a', 'disbursement.created');
    const approved = await transition('disbursement_a');
    const completed = await transition('disbursement_a');
    const other = await transition('disbursement_b', 'disbursement.created');
    const c = clock();
    // Room for every delivery at once: only the order rule holds the later ones back.
    const dispatcher = new WebhookDispatcher({
      db: t.db,
      box: testBox,
      retrySeconds: [5],
      timeoutMs: 2000,
      profile: 'dev',
      now: c.now,
      concurrency: 16,
      perSubscription: 16,
      perOrganization: 16,
    });

    expect(await dispatcher.runOnce()).toBe(2);
    expect(new Set(arrived(receiver))).toEqual(new Set([created, other]));
    // The created event's retry is not due yet, and the approval and completion wait for it.
    expect(await dispatcher.runOnce()).toBe(0);
    c.advance(4);
    expect(await dispatcher.runOnce()).toBe(0);
    c.advance(1);
    expect(await dispatcher.runOnce()).toBe(1);
    expect(await dispatcher.runOnce()).toBe(1);
    expect(await dispatcher.runOnce()).toBe(1);
    expect(await dispatcher.runOnce()).toBe(0);
    const ofA = arrived(receiver).filter((id) => id !== other);
    expect(ofA).toEqual([created, created, approved, completed]);
    const statuses = await t.db.selectFrom('webhook_deliveries').select('status').execute();
    expect(statuses.map((s) => s.status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
  });

  it('lets the later transitions go once the earlier delivery has used up its attempts (failed)', async () => {
    let answered = 0;
    const receiver = await startReceiver(() => (answered++ === 0 ? 500 : 204));
    receivers.push(receiver);
    await subscribe(receiver.url, 'disbursement.updated');
    const submitted = await transition('disbursement_c');
    const completed = await transition('disbursement_c');
    const dispatcher = new WebhookDispatcher({
      db: t.db,
      box: testBox,
      retrySeconds: [],
      timeoutMs: 2000,
      profile: 'dev',
      now: clock().now,
    });
    expect(await dispatcher.runOnce()).toBe(1);
    expect(await dispatcher.runOnce()).toBe(1);
    expect(arrived(receiver)).toEqual([submitted, completed]);
    const rows = await t.db.selectFrom('webhook_deliveries').innerJoin('events', 'events.id', 'webhook_deliveries.event_id');
    const byEvent = new Map((await rows.select(['events.id', 'webhook_deliveries.status']).execute()).map((r) => [r.id, r.status]));
    expect(byEvent.get(submitted)).toBe('failed');
    expect(byEvent.get(completed)).toBe('succeeded');
  });

  it('sends transitions in order when many are due at once with a pool that could send them all together', async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    await subscribe(receiver.url, 'disbursement.updated');
    const ids: string[] = [];
    for (let i = 0; i < 6; i += 1) ids.push(await transition('disbursement_d'));
    const dispatcher = new WebhookDispatcher({
      db: t.db,
      box: testBox,
      retrySeconds: [5],
      timeoutMs: 2000,
      profile: 'dev',
      now: clock().now,
      perSubscription: 16,
    });
    let claimed = 0;
    for (let pass = 0; pass < 10; pass += 1) claimed += await dispatcher.runOnce();
    expect(claimed).toBe(6);
    expect(arrived(receiver)).toEqual(ids);
  });
});
