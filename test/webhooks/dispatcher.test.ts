import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { prefixedId } from '../../src/db/ids.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { emitEvent } from '../../src/webhooks/outbox.js';
import { generateSigningSecret } from '../../src/webhooks/signing-secret.js';
import { isPublicAddress, targetProblem } from '../../src/webhooks/targets.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { testBox } from '../helpers/app.js';

let t: TestDatabase;
let orgId: string;
const receivers: Awaited<ReturnType<typeof startReceiver>>[] = [];

beforeAll(async () => {
  t = await createTestDatabase();
  orgId = (await addOrganization(t.db, { ein: '98-5550001', name: 'Hook Fund', kind: 'fund_provider' })).id;
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
  await t.db.deleteFrom('event_subscriptions').execute();
});
afterAll(async () => t?.drop());

async function subscribe(url: string, category = 'donor_account.created') {
  const id = prefixedId('evtsub');
  await t.db
    .insertInto('event_subscriptions')
    .values({ id, environment: 'sandbox', organization_id: orgId, url, category, signing_secret: testBox.seal(generateSigningSecret()) })
    .execute();
  return id;
}

async function emit(count = 1) {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    ids.push(
      await t.db.transaction().execute((trx) =>
        emitEvent(trx, {
          environment: 'sandbox',
          organizationId: orgId,
          category: 'donor_account.created',
          objectId: `donor_account_${i}`,
          objectType: 'donor_account',
        }),
      ),
    );
  }
  return ids;
}

function clock(start = Date.parse('2027-03-01T00:00:00Z')) {
  let now = start;
  return { now: () => new Date(now), advance: (seconds: number) => void (now += seconds * 1000) };
}

describe('webhook dispatcher', () => {
  it('retries a failing receiver on the backoff schedule, then gives up (attempts = 1 + delays)', async () => {
    const receiver = await startReceiver(() => 500);
    receivers.push(receiver);
    const subscription = await subscribe(receiver.url);
    await emit();
    const c = clock();
    const dispatcher = new WebhookDispatcher({
      db: t.db,
      box: testBox,
      retrySeconds: [5, 300],
      timeoutMs: 2000,
      profile: 'dev',
      now: c.now,
    });
    expect(await dispatcher.runOnce()).toBe(1);
    expect(receiver.received).toHaveLength(1);
    const first = await t.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('subscription_id', '=', subscription)
      .executeTakeFirstOrThrow();
    expect(first).toMatchObject({ status: 'pending', attempts: 1, last_status: 500 });
    expect(first.next_attempt_at.getTime()).toBe(c.now().getTime() + 5000);
    c.advance(4);
    expect(await dispatcher.runOnce()).toBe(0);
    c.advance(1);
    expect(await dispatcher.runOnce()).toBe(1);
    c.advance(299);
    expect(await dispatcher.runOnce()).toBe(0);
    c.advance(1);
    expect(await dispatcher.runOnce()).toBe(1);
    c.advance(86_400);
    expect(await dispatcher.runOnce()).toBe(0);
    expect(receiver.received).toHaveLength(3);
    const last = await t.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('subscription_id', '=', subscription)
      .executeTakeFirstOrThrow();
    expect(last).toMatchObject({ status: 'failed', attempts: 3 });
    // Every attempt carried the same webhook-id, so receivers can de-duplicate.
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
  });

  it('marks a subscription requires_attention after five days without a successful delivery', async () => {
    const receiver = await startReceiver(() => 503);
    receivers.push(receiver);
    const subscription = await subscribe(receiver.url);
    await emit();
    const c = clock();
    const dispatcher = new WebhookDispatcher({
      db: t.db,
      box: testBox,
      retrySeconds: [86_400, 86_400, 86_400, 86_400, 86_400, 86_400],
      timeoutMs: 2000,
      profile: 'dev',
      now: c.now,
    });
    for (let day = 0; day < 5; day += 1) {
      await dispatcher.runOnce();
      expect(
        (await t.db.selectFrom('event_subscriptions').select('status').where('id', '=', subscription).executeTakeFirstOrThrow()).status,
      ).toBe('active');
      c.advance(86_400);
    }
    await dispatcher.runOnce();
    expect(
      (await t.db.selectFrom('event_subscriptions').select('status').where('id', '=', subscription).executeTakeFirstOrThrow()).status,
    ).toBe('requires_attention');
  });

  it('succeeds and clears the failure state when the receiver recovers', async () => {
    let status = 500;
    const receiver = await startReceiver(() => status);
    receivers.push(receiver);
    const subscription = await subscribe(receiver.url);
    await emit();
    const c = clock();
    const dispatcher = new WebhookDispatcher({ db: t.db, box: testBox, retrySeconds: [5], timeoutMs: 2000, profile: 'dev', now: c.now });
    await dispatcher.runOnce();
    status = 200;
    c.advance(5);
    await dispatcher.runOnce();
    const row = await t.db.selectFrom('event_subscriptions').selectAll().where('id', '=', subscription).executeTakeFirstOrThrow();
    expect(row.failing_since).toBeNull();
    expect(row.last_success_at).not.toBeNull();
  });

  it('never delivers the same attempt twice with two dispatchers running at once', async () => {
    const receiver = await startReceiver(() => 204);
    receivers.push(receiver);
    await subscribe(receiver.url);
    const events = await emit(40);
    const a = new WebhookDispatcher({ db: t.db, box: testBox, retrySeconds: [5], timeoutMs: 2000, profile: 'dev', batchSize: 7 });
    const b = new WebhookDispatcher({ db: t.db, box: testBox, retrySeconds: [5], timeoutMs: 2000, profile: 'dev', batchSize: 7 });
    for (let round = 0; round < 10; round += 1) await Promise.all([a.runOnce(), b.runOnce(), a.runOnce(), b.runOnce()]);
    const ids = receiver.received.map((r) => r.headers['webhook-id'] as string);
    expect(ids).toHaveLength(40);
    expect(new Set(ids)).toEqual(new Set(events));
  });

  it('emits nothing for a change that rolled back', async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    await subscribe(receiver.url);
    const before = Number(
      (
        await t.db
          .selectFrom('events')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
    await expect(
      t.db.transaction().execute(async (trx) => {
        await emitEvent(trx, {
          environment: 'sandbox',
          organizationId: orgId,
          category: 'donor_account.created',
          objectId: 'donor_account_x',
          objectType: 'donor_account',
        });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(
      Number(
        (
          await t.db
            .selectFrom('events')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    ).toBe(before);
    expect(await new WebhookDispatcher({ db: t.db, box: testBox, retrySeconds: [], timeoutMs: 1000, profile: 'dev' }).runOnce()).toBe(0);
  });
});

describe('webhook targets', () => {
  it('allow only https to public addresses in production, and http on loopback in dev', () => {
    expect(targetProblem('https://hooks.example.org/in', 'production')).toBeUndefined();
    for (const url of [
      'http://hooks.example.org/in',
      'https://127.0.0.1/in',
      'https://10.1.2.3/in',
      'https://[::1]/in',
      'https://169.254.169.254/latest',
      'https://localhost/in',
      'https://user:pw@hooks.example.org/',
    ]) {
      expect(targetProblem(url, 'production'), url).toBeDefined();
    }
    expect(targetProblem('http://127.0.0.1:8080/in', 'dev')).toBeUndefined();
    expect(targetProblem('http://hooks.example.org/in', 'dev')).toBeDefined();
    expect(isPublicAddress('8.8.8.8')).toBe(true);
    expect(isPublicAddress('192.168.1.1')).toBe(false);
    expect(isPublicAddress('fd00::1')).toBe(false);
  });

  it('refuses at delivery time a name that resolves to a non-public address in production', async () => {
    const id = await subscribe('https://localhost.localdomain.invalid/in');
    void id;
    await t.db.updateTable('event_subscriptions').set({ url: 'https://127.0.0.1.nip.invalid/in' }).execute();
    await emit();
    const dispatcher = new WebhookDispatcher({ db: t.db, box: testBox, retrySeconds: [], timeoutMs: 1000, profile: 'production' });
    expect(await dispatcher.runOnce()).toBe(1);
    const row = await t.db.selectFrom('webhook_deliveries').selectAll().orderBy('created_at', 'desc').executeTakeFirstOrThrow();
    expect(row.status).toBe('failed');
    expect(row.last_error).toBeTruthy();
  });
});

describe('webhook admin commands', () => {
  it('webhooks deliveries shows the log and webhooks replay <id> sends a failed delivery again', async () => {
    const { runCli } = await import('../../src/cli/run.js');
    const { TEST_SECRETS_KEY } = await import('../helpers/app.js');
    let status = 500;
    const receiver = await startReceiver(() => status);
    receivers.push(receiver);
    await subscribe(receiver.url);
    await emit();
    const dispatcher = new WebhookDispatcher({ db: t.db, box: testBox, retrySeconds: [], timeoutMs: 2000, profile: 'dev' });
    await dispatcher.runOnce();
    const admin = async (...argv: string[]) => {
      let stdout = '';
      const code = await runCli({
        argv: [...argv, '--json'],
        stdout: (s) => void (stdout += s),
        stderr: () => undefined,
        readStdin: async () => '',
        env: { DATABASE_URL: t.url, ALMONER_SECRETS_KEY: TEST_SECRETS_KEY },
      });
      return { code, json: JSON.parse(stdout || '{}') as Record<string, unknown> };
    };
    const failed = await admin('webhooks', 'deliveries', '--status', 'failed');
    const [delivery] = failed.json.deliveries as { id: string; attempts: number; last_status: number; url: string }[];
    expect(delivery).toMatchObject({ attempts: 1, last_status: 500, url: receiver.url });
    status = 204;
    const replayed = await admin('webhooks', 'replay', delivery!.id);
    expect(replayed).toMatchObject({ code: 0, json: { id: delivery!.id, status: 'pending' } });
    await dispatcher.runOnce();
    expect(receiver.received).toHaveLength(2);
    expect(
      ((await admin('webhooks', 'deliveries', '--status', 'succeeded')).json.deliveries as { id: string }[]).map((d) => d.id),
    ).toContain(delivery!.id);
    expect((await admin('webhooks', 'replay', 'whd_nope')).code).toBe(1);
  });
});
