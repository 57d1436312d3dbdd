import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { runCli } from '../../src/cli/run.js';
import { prefixedId } from '../../src/db/ids.js';
import { WebhookDispatcher, type DeliveryOutcome } from '../../src/webhooks/dispatcher.js';
import { emitEvent } from '../../src/webhooks/outbox.js';
import { generateSigningSecret } from '../../src/webhooks/signing-secret.js';
import { TEST_SECRETS_KEY, testBox } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/** A subscription failing attempt after attempt is paused (an audit row), and resumed from the admin CLI. */

let t: TestDatabase;
let orgId: string;

beforeAll(async () => {
  t = await createTestDatabase();
  orgId = (await addOrganization(t.db, { ein: '98-5550077', name: 'Pause Fund', kind: 'fund_provider' })).id;
});
afterAll(async () => t?.drop());

const emit = () =>
  t.db.transaction().execute((trx) =>
    emitEvent(trx, {
      environment: 'sandbox',
      organizationId: orgId,
      category: 'donor_account.created',
      objectId: prefixedId('donor_account'),
      objectType: 'donor_account',
    }),
  );
const subscription = (id: string) => t.db.selectFrom('event_subscriptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const audit = (event: string) =>
  t.db.selectFrom('audit_events').selectAll().where('event', '=', event).where('organization_id', '=', orgId).execute();

async function admin(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli({
    argv: [...argv, '--json'],
    stdout: (s) => void (stdout += s),
    stderr: (s) => void (stderr += s),
    readStdin: async () => '',
    env: { DATABASE_URL: t.url, ALMONER_SECRETS_KEY: TEST_SECRETS_KEY },
  });
  return { code, json: JSON.parse(stdout || '{}') as Record<string, unknown>, stderr };
}

describe('a subscription that fails attempt after attempt', () => {
  it('is paused after pauseAfterFailures in a row (an audit row), gets no new deliveries, and `webhooks resume` makes it active again', async () => {
    let status = 500;
    const receiver = await startReceiver(() => status);
    try {
      const id = prefixedId('evtsub');
      await t.db
        .insertInto('event_subscriptions')
        .values({
          id,
          environment: 'sandbox',
          organization_id: orgId,
          url: receiver.url,
          category: 'donor_account.created',
          signing_secret: testBox.seal(generateSigningSecret()),
        })
        .execute();
      const outcomes: DeliveryOutcome[] = [];
      const dispatcher = new WebhookDispatcher({
        db: t.db,
        box: testBox,
        retrySeconds: [],
        timeoutMs: 2000,
        profile: 'dev',
        pauseAfterFailures: 3,
        onOutcome: (o) => outcomes.push(o),
      });

      await emit();
      await emit();
      await dispatcher.runOnce();
      expect(await subscription(id)).toMatchObject({ status: 'active', consecutive_failures: 2 });
      await emit();
      await dispatcher.runOnce();
      expect(await subscription(id)).toMatchObject({ status: 'requires_attention', consecutive_failures: 3 });
      expect(outcomes).toEqual(['http_error', 'http_error', 'http_error']);
      const [paused] = await audit('webhook.paused');
      expect(paused).toMatchObject({ environment: 'sandbox', actor_user_id: null });
      expect(paused!.details).toMatchObject({ subscription: id, url: receiver.url, reason: 'failures_in_a_row', failures_in_a_row: 3 });

      // Paused: a new event is not sent to it.
      await emit();
      expect(await dispatcher.runOnce()).toBe(0);
      expect(receiver.received).toHaveLength(3);

      status = 204;
      const resumed = await admin('webhooks', 'resume', id);
      expect(resumed).toMatchObject({ code: 0, json: { id, status: 'active', url: receiver.url } });
      expect(await subscription(id)).toMatchObject({ status: 'active', consecutive_failures: 0, failing_since: null });
      expect(await audit('webhook.resumed')).toHaveLength(1);
      // Only a paused subscription is resumed; an unknown one is not found.
      expect((await admin('webhooks', 'resume', id)).stderr).toMatch(/error \(invalid\): The subscription is active, not paused/);
      expect((await admin('webhooks', 'resume', 'evtsub_nope')).stderr).toMatch(/error \(not_found\)/);

      await emit();
      expect(await dispatcher.runOnce()).toBe(1);
      expect(outcomes.at(-1)).toBe('succeeded');
      expect(receiver.received).toHaveLength(4);
    } finally {
      await receiver.close();
    }
  });

  it('counts a success as breaking the run: failures with successes between them never pause', async () => {
    const answers = [500, 500, 204, 500, 500, 204, 500, 500];
    const receiver = await startReceiver(() => answers.shift() ?? 500);
    try {
      const id = prefixedId('evtsub');
      await t.db
        .insertInto('event_subscriptions')
        .values({
          id,
          environment: 'sandbox',
          organization_id: orgId,
          url: `${receiver.url}/mixed`,
          category: 'donor_account.updated',
          signing_secret: testBox.seal(generateSigningSecret()),
        })
        .execute();
      const dispatcher = new WebhookDispatcher({
        db: t.db,
        box: testBox,
        retrySeconds: [],
        timeoutMs: 2000,
        profile: 'dev',
        pauseAfterFailures: 3,
        perSubscription: 1,
      });
      for (let i = 0; i < 8; i += 1) {
        await t.db.transaction().execute((trx) =>
          emitEvent(trx, {
            environment: 'sandbox',
            organizationId: orgId,
            category: 'donor_account.updated',
            objectId: prefixedId('donor_account'),
            objectType: 'donor_account',
          }),
        );
        await dispatcher.runOnce();
      }
      expect(answers).toEqual([]);
      expect(await subscription(id)).toMatchObject({ status: 'active', consecutive_failures: 2 });
    } finally {
      await receiver.close();
    }
  });
});
