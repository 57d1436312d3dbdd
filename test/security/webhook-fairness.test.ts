/**
 * Attack: one fund provider starves every other tenant's webhooks. It subscribes as many
 * receivers as it likes (the same one over and over, or one URL per path) that never answer;
 * one event of its own then holds every slot of the dispatcher's pool until the attempt
 * deadline, at every retry, and another provider's delivery waits ceil(N/16) deadlines; each
 * event also becomes N POSTs to one URL.
 * Protection: the claim counts the attempts in flight over every dispatcher and caps them per
 * organization (webhook_in_flight_per_organization, half the pool by default) and per
 * subscription, and hands the free slots round the organizations (each one's oldest due
 * delivery first), under an advisory lock so concurrent claims never overfill; a subscription
 * to a URL and category that exists answers the existing one, and an organization has at most
 * SUBSCRIPTIONS_PER_ORGANIZATION per environment, both held under a lock of its own against
 * concurrent creates (docs/security.md, "One tenant's webhooks starving the others").
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { prefixedId } from '../../src/db/ids.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { SUBSCRIPTIONS_PER_ORGANIZATION } from '../../src/events/subscriptions-service.js';
import { claimDueDeliveries } from '../../src/webhooks/deliveries-repository.js';
import { emitEvent } from '../../src/webhooks/outbox.js';
import { generateSigningSecret } from '../../src/webhooks/signing-secret.js';
import { testBox } from '../helpers/app.js';
import { apiRequest } from '../helpers/gateway.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

const { testDatabase: t, server } = useOAuthServer({ staff: 0, config: { webhook_poll_ms: 50 } });

/** A receiver that reads each request and never answers, holding every connection. */
async function startSilentReceiver() {
  const sockets = new Set<net.Socket>();
  const silent = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const { port } = silent.address() as net.AddressInfo;
  return {
    url: (path: string) => `http://127.0.0.1:${port}/${path}`,
    get held() {
      return sockets.size;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        silent.close(() => resolve());
      }),
  };
}

async function fundProvider(ein: string) {
  const org = await addOrganization(t.db, { ein, name: `Fund ${ein}`, kind: 'fund_provider' });
  const key = (await createApiKey(t.db, { org: ein, environment: 'sandbox' })).key;
  const call = (method: string, path: string, body?: unknown) => apiRequest(server, 'sandbox', method, path, { bearer: key, json: body });
  return { id: org.id, call };
}

const subscriptionsOf = (organizationId: string) =>
  t.db
    .selectFrom('event_subscriptions')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('status', '<>', 'deleted')
    .execute();
let silent: Awaited<ReturnType<typeof startSilentReceiver>>;

beforeAll(async () => {
  silent = await startSilentReceiver();
});
afterAll(async () => silent?.close());

describe('event subscriptions of one organization', () => {
  it('answer the existing subscription for the same URL and category (201, no second row, no secret again), even in a concurrent burst', async () => {
    const provider = await fundProvider('98-4440001');
    const body = { url: silent.url('same'), category: 'donor_account.created' };
    // Twelve identical creates at once: one subscription, its secret in one answer only.
    const burst = await Promise.all(Array.from({ length: 12 }, () => provider.call('POST', '/v1/event_subscriptions', body)));
    expect(burst.map((answer) => answer.status)).toEqual(Array(12).fill(201));
    expect(new Set(burst.map((answer) => answer.body.id)).size).toBe(1);
    const withSecret = burst.filter((answer) => answer.body.signing_secret !== undefined);
    expect(withSecret).toHaveLength(1);
    const first = withSecret[0]!;
    expect(first.body.signing_secret).toMatch(/^whsec_/);
    const again = await provider.call('POST', '/v1/event_subscriptions', body);
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ id: first.body.id, url: body.url, category: body.category, status: 'active' });
    expect(again.body).not.toHaveProperty('signing_secret');
    expect(again.headers.get('location')).toBe(`/v1/event_subscriptions/${first.body.id as string}`);
    // Another spelling of the same URL is the same subscription.
    const spelled = await provider.call('POST', '/v1/event_subscriptions', {
      ...body,
      url: silent.url('same').replace('http://127.0.0.1', 'HTTP://127.0.0.1'),
    });
    expect(spelled.body.id).toBe(first.body.id);
    // Another secret for it is refused, naming the one that exists.
    const other = await provider.call('POST', '/v1/event_subscriptions', { ...body, signing_secret: generateSigningSecret() });
    expect(other.status).toBe(400);
    expect(other.body.detail).toContain(first.body.id as string);
    // Another category of the same URL is another subscription.
    expect((await provider.call('POST', '/v1/event_subscriptions', { ...body, category: 'donor_account.updated' })).body.id).not.toBe(
      first.body.id,
    );
    expect(await subscriptionsOf(provider.id)).toHaveLength(2);
    // Paused after repeated failures (test/webhooks/pause.test.ts), the API resumes it too, with its audit row.
    await t.db
      .updateTable('event_subscriptions')
      .set({ status: 'requires_attention', consecutive_failures: 50 })
      .where('id', '=', first.body.id as string)
      .execute();
    const resumed = await provider.call('PATCH', `/v1/event_subscriptions/${first.body.id as string}`, { status: 'active' });
    expect(resumed.body.status).toBe('active');
    expect(
      await t.db
        .selectFrom('event_subscriptions')
        .select('consecutive_failures')
        .where('id', '=', first.body.id as string)
        .executeTakeFirstOrThrow(),
    ).toEqual({ consecutive_failures: 0 });
    expect(
      await t.db
        .selectFrom('audit_events')
        .select(['environment', 'details'])
        .where('event', '=', 'webhook.resumed')
        .where('organization_id', '=', provider.id)
        .execute(),
    ).toEqual([
      {
        environment: 'sandbox',
        details: {
          subscription: first.body.id,
          url: body.url,
          previous_status: 'requires_attention',
          via: 'api',
          api_key: expect.any(String),
        },
      },
    ]);
    // Once deleted, the URL and category may be subscribed again.
    expect((await provider.call('PATCH', `/v1/event_subscriptions/${first.body.id as string}`, { status: 'deleted' })).status).toBe(200);
    const renewed = await provider.call('POST', '/v1/event_subscriptions', body);
    expect(renewed.status).toBe(201);
    expect(renewed.body.id).not.toBe(first.body.id);
    expect(renewed.body.signing_secret).toMatch(/^whsec_/);
  });

  it(`are at most ${SUBSCRIPTIONS_PER_ORGANIZATION} per environment, however many are created at once`, async () => {
    const provider = await fundProvider('98-4440002');
    const answers = await Promise.all(
      Array.from({ length: SUBSCRIPTIONS_PER_ORGANIZATION + 15 }, (_, i) =>
        provider.call('POST', '/v1/event_subscriptions', { url: silent.url(`limit/${i}`), category: 'donor_account.created' }),
      ),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(SUBSCRIPTIONS_PER_ORGANIZATION);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused).toHaveLength(15);
    for (const answer of refused) {
      expect(answer.status).toBe(400);
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(answer.body.detail).toMatch(
        new RegExp(`${SUBSCRIPTIONS_PER_ORGANIZATION} event subscriptions in sandbox, the most allowed; delete one`),
      );
    }
    expect(await subscriptionsOf(provider.id)).toHaveLength(SUBSCRIPTIONS_PER_ORGANIZATION);
  });
});

describe('one provider with many subscriptions to receivers that never answer', () => {
  it("does not delay another provider's delivery: it arrives within 2 s while the attacker's attempts hang", async () => {
    const attacker = await fundProvider('98-4440003');
    for (let i = 0; i < SUBSCRIPTIONS_PER_ORGANIZATION; i += 1) {
      expect(
        (await attacker.call('POST', '/v1/event_subscriptions', { url: silent.url(`attack/${i}`), category: 'donor_account.created' }))
          .status,
      ).toBe(201);
    }
    const honest = await fundProvider('98-4440004');
    const receiver = await startReceiver();
    try {
      expect((await honest.call('POST', '/v1/event_subscriptions', { url: receiver.url, category: 'donor_account.created' })).status).toBe(
        201,
      );
      const before = silent.held;
      expect((await attacker.call('POST', '/v1/donor_accounts', { donor: { email: 'attack@example.org' } })).status).toBe(201);
      // The attacker's deliveries take the slots they may: its share of the pool, no more.
      await expect.poll(() => silent.held - before, { timeout: 10_000 }).toBe(server.config.webhook_in_flight_per_organization);

      const sent = Date.now();
      expect((await honest.call('POST', '/v1/donor_accounts', { donor: { email: 'honest@example.org' } })).status).toBe(201);
      await expect.poll(() => receiver.received.length, { timeout: 2_000, interval: 20 }).toBe(1);
      expect(receiver.received[0]!.at - sent).toBeLessThan(2_000);
      // The attacker's attempts were hanging all along, and never more than its share.
      expect(silent.held - before).toBe(server.config.webhook_in_flight_per_organization);

      const metrics = await (await fetch(`${server.urls.api}/metrics`)).text();
      expect(metrics).toMatch(/^almoner_webhook_attempts_total\{outcome="succeeded"\} [1-9]/m);
      expect(metrics).toMatch(/^almoner_webhook_attempts_total\{outcome="timeout"\} \d/m);
    } finally {
      await receiver.close();
    }
  });
});

describe('the claim', () => {
  it('holds the caps per organization and per subscription and never hands a delivery out twice, under a concurrent burst of claims', async () => {
    const orgs = [
      await addOrganization(t.db, { ein: '98-4440005', name: 'Burst A', kind: 'fund_provider' }),
      await addOrganization(t.db, { ein: '98-4440006', name: 'Burst B', kind: 'fund_provider' }),
    ];
    const subscribe = async (organizationId: string, path: string) => {
      const id = prefixedId('evtsub');
      await t.db
        .insertInto('event_subscriptions')
        .values({
          id,
          environment: 'production',
          organization_id: organizationId,
          url: silent.url(path),
          category: 'grant_request.created',
          signing_secret: testBox.seal(generateSigningSecret()),
        })
        .execute();
      return id;
    };
    const heavy = [await subscribe(orgs[0]!.id, 'burst/a1'), await subscribe(orgs[0]!.id, 'burst/a2')];
    const light = await subscribe(orgs[1]!.id, 'burst/b1');
    // Due an hour from now, set in the event's own transaction (the test server's dispatcher
    // never sees them due); the heavy organization's 40 deliveries older than the light one's 3.
    const hour = Date.now() + 3_600_000;
    const emit = (organizationId: string, dueAt: number) =>
      t.db.transaction().execute(async (trx) => {
        const event = await emitEvent(trx, {
          environment: 'production',
          organizationId,
          category: 'grant_request.created',
          objectId: prefixedId('grant_request'),
          objectType: 'grant_request',
        });
        await trx
          .updateTable('webhook_deliveries')
          .set({ next_attempt_at: new Date(dueAt) })
          .where('event_id', '=', event)
          .execute();
      });
    for (let i = 0; i < 20; i += 1) await emit(orgs[0]!.id, hour + i);
    for (let i = 0; i < 3; i += 1) await emit(orgs[1]!.id, hour + 60_000 + i);
    const now = new Date(hour + 120_000);

    // One claim with room for four: the light organization's oldest is among them, not only the heavy one's.
    const first = await claimDueDeliveries(t.db, now, 4, 60, { perOrganization: 8, perSubscription: 4 });
    expect(first.map((d) => d.subscription_id)).toContain(light);
    // Then twenty claims at once, each with room for sixteen.
    const burst = (
      await Promise.all(Array.from({ length: 20 }, () => claimDueDeliveries(t.db, now, 16, 60, { perOrganization: 8, perSubscription: 4 })))
    ).flat();
    const claimed = [...first, ...burst];
    expect(new Set(claimed.map((d) => d.id)).size).toBe(claimed.length);
    const count = (ids: string[]) => claimed.filter((d) => ids.includes(d.subscription_id)).length;
    expect(count(heavy)).toBe(8);
    expect(count([heavy[0]!])).toBe(4);
    expect(count([heavy[1]!])).toBe(4);
    expect(count([light])).toBe(3);
    const leased = await t.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'attempts'])
      .where('locked_until', 'is not', null)
      .where('subscription_id', 'in', [...heavy, light])
      .execute();
    expect(leased).toHaveLength(11);
    expect(leased.every((d) => d.attempts === 1)).toBe(true);
  });
});
