import crypto from 'node:crypto';
import { AggregatorRegistry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../../src/metrics/metrics.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { parseExposition, total } from './exposition.js';

/**
 * workers > 1: the primary sums the workers' registries with prom-client's AggregatorRegistry
 * (src/metrics/cluster.ts). Here two runtimes' registries stand for two workers; the end-to-end
 * run over the cluster's IPC is test/server/workers.test.ts.
 */

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});

afterAll(async () => {
  await t?.drop();
});

describe('/metrics aggregated over workers', () => {
  it('sums request histograms and pool gauges, and takes the database-read outbox gauges once', async () => {
    const workers = [new Metrics({ db: t.db }), new Metrics({ db: t.db })];
    const labels = { host: 'api', method: 'GET', route: '/healthz', status: '200' };
    workers[0]!.requestDuration.observe(labels, 0.002);
    workers[0]!.requestDuration.observe(labels, 0.003);
    workers[1]!.requestDuration.observe(labels, 0.004);
    workers[0]!.inFlight = 2;
    workers[1]!.inFlight = 1;
    await queueDelivery('production');
    await queueDelivery('production');

    const aggregated = AggregatorRegistry.aggregate(await Promise.all(workers.map((worker) => worker.registry.getMetricsAsJSON())));
    const { samples } = parseExposition(await aggregated.metrics());

    expect(total(samples, 'almoner_http_request_duration_seconds_count', labels)).toBe(3);
    expect(total(samples, 'almoner_http_request_duration_seconds_bucket', { ...labels, le: '0.0025' })).toBe(1);
    expect(total(samples, 'almoner_http_requests_in_flight')).toBe(3);
    expect(total(samples, 'almoner_db_pool_max_connections')).toBe(2 * (await single(workers[0]!, 'almoner_db_pool_max_connections')));
    // One database, read by every worker: the aggregate is that reading, not N times it.
    expect(await single(workers[0]!, 'almoner_webhook_deliveries_pending', { environment: 'production' })).toBe(2);
    for (const environment of ['production', 'sandbox']) {
      expect(total(samples, 'almoner_webhook_deliveries_pending', { environment })).toBe(
        await single(workers[0]!, 'almoner_webhook_deliveries_pending', { environment }),
      );
    }
  });
});

async function single(metrics: Metrics, name: string, labels: Record<string, string> = {}): Promise<number> {
  const { samples } = parseExposition(await metrics.registry.metrics());
  return total(samples, name, labels)!;
}

/** One pending webhook delivery (what the outbox gauges count), as test/metrics/metrics.test.ts queues them. */
async function queueDelivery(environment: 'production' | 'sandbox') {
  const hex = () => crypto.randomBytes(6).toString('hex');
  const org = await t.db
    .insertInto('organizations')
    .values({ ein: String(100_000_000 + crypto.randomInt(800_000_000)), name: 'Aggregation', kind: 'nonprofit' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const subscription = `sub_${hex()}`;
  const event = `evt_${hex()}`;
  await t.db
    .insertInto('event_subscriptions')
    .values({
      id: subscription,
      environment,
      organization_id: org.id,
      url: 'https://hooks.example.org/x',
      category: 'grant_request.created',
      signing_secret: 'whsec_test',
    } as never)
    .execute();
  await t.db
    .insertInto('events')
    .values({
      id: event,
      environment,
      organization_id: org.id,
      category: 'grant_request.created',
      associated_object_id: 'x',
      associated_object_type: 'grant_request',
    } as never)
    .execute();
  await t.db
    .insertInto('webhook_deliveries')
    .values({ id: `whd_${hex()}`, environment, subscription_id: subscription, event_id: event, next_attempt_at: new Date() } as never)
    .execute();
}
