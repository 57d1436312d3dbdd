import crypto from 'node:crypto';
import { sql } from 'kysely';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { createDatabase } from '../../src/db/database.js';
import { createLogger } from '../../src/logging/logger.js';
import { startServer } from '../../src/server/start.js';
import { HOSTS, testApp, testConfig } from '../helpers/app.js';
import { obtainTokens, tokenRequest } from '../helpers/flow.js';
import { apiGet, apiKeyFor, seedData } from '../helpers/gateway.js';
import { request as httpRequest } from '../helpers/process.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { parseExposition, total, type Sample } from './exposition.js';

const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
const DURATION = 'almoner_http_request_duration_seconds';
const REDIRECT = 'https://app.example.org/callback';

const { testDatabase: t, server, staff } = useOAuthServer();

async function scrape(base = server.urls.api): Promise<{ text: string; samples: Sample[]; types: Map<string, string> }> {
  const response = await fetch(`${base}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe(CONTENT_TYPE);
  const text = await response.text();
  return { text, ...parseExposition(text) };
}

/** How much a series (or the sum of matching series) grew between two scrapes. */
function grew(before: Sample[], after: Sample[], name: string, labels: Record<string, string>): number {
  return (total(after, name, labels) ?? 0) - (total(before, name, labels) ?? 0);
}

/**
 * A UUID, or a long run of token characters (ids, tokens, keys). A long snake_case word is a
 * fixed name, not an id: Node 24's V8 names a heap space `shared_trusted_large_object`.
 */
function looksLikeId(value: string): boolean {
  if (/[0-9a-f]{8}-[0-9a-f]{4}-/.test(value)) return true;
  return (value.match(/[A-Za-z0-9_-]{24,}/g) ?? []).some((run) => !/^[a-z]+(?:_[a-z]+)*$/.test(run));
}

/** Label values are templates or fixed words: never an id, a token or a raw path. */
function expectBoundedLabels(samples: Sample[], secrets: string[]) {
  for (const sample of samples) {
    for (const value of Object.values(sample.labels)) {
      for (const secret of secrets) expect(value).not.toContain(secret);
      expect(looksLikeId(value), `${sample.name} label ${value} looks like an id`).toBe(false);
    }
  }
}

describe('GET /metrics on the API hosts', () => {
  it('serves the Prometheus text format with the process, pool and in-flight metrics, on both API hosts only', async () => {
    const { samples, types } = await scrape();
    for (const [name, type] of [
      ['process_cpu_user_seconds_total', 'counter'],
      ['process_resident_memory_bytes', 'gauge'],
      ['nodejs_heap_size_used_bytes', 'gauge'],
      ['nodejs_eventloop_lag_seconds', 'gauge'],
      ['nodejs_gc_duration_seconds', 'histogram'],
      [DURATION, 'histogram'],
      ['almoner_http_requests_in_flight', 'gauge'],
      ['almoner_db_pool_connections', 'gauge'],
      ['almoner_oauth_tokens_issued_total', 'counter'],
      ['almoner_client_secret_argon2_verifications_total', 'counter'],
      ['almoner_webhook_deliveries_pending', 'gauge'],
    ] as const) {
      expect(types.get(name.replace(/_total$/, '')) ?? types.get(name), name).toBe(type);
    }
    expect(total(samples, 'process_resident_memory_bytes')).toBeGreaterThan(10_000_000);
    // The scrape itself is in flight while the gauge is read.
    expect(total(samples, 'almoner_http_requests_in_flight')).toBeGreaterThanOrEqual(1);
    // The test database's pool (poolMax 5) has served the runtime's start.
    expect(total(samples, 'almoner_db_pool_max_connections')).toBe(5);
    expect(total(samples, 'almoner_db_pool_connections')).toBeGreaterThanOrEqual(1);
    expect(total(samples, 'almoner_db_pool_waiting_requests')).toBe(0);

    const sandbox = await scrape(server.urls.sandboxApi);
    expect(total(sandbox.samples, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    for (const dashboard of [server.urls.dashboard, server.urls.sandboxDashboard]) {
      const response = await fetch(`${dashboard}/metrics`);
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
  });

  it('labels gateway requests by route template, never by the raw path, ids or credentials', async () => {
    const seeded = await seedData(t.db, staff, 'production', { donations: 2 });
    const key = await apiKeyFor(t.db, staff, 'production');
    const id = seeded.donation_ids[0]!;
    const missing = crypto.randomUUID();
    const stray = `s3cr3t-${crypto.randomBytes(12).toString('hex')}`;
    const before = (await scrape()).samples;

    expect((await apiGet(server, 'production', `/v1/donations/${id}`, { bearer: key })).status).toBe(200);
    expect((await apiGet(server, 'production', `/v1/donations/${missing}`, { bearer: key })).status).toBe(404);
    expect((await apiGet(server, 'production', `/v1/donations/${id}`, { bearer: 'not-a-credential' })).status).toBe(401);
    expect((await apiGet(server, 'production', `/v1/${stray}`, { bearer: key })).status).toBe(404);
    expect((await apiGet(server, 'sandbox', '/v1/donations', { bearer: key })).status).toBe(401);

    const { text, samples } = await scrape();
    const donation = { host: 'api', method: 'GET', route: '/v1/donations/:id' };
    expect(grew(before, samples, `${DURATION}_count`, { ...donation, status: '200' })).toBe(1);
    expect(grew(before, samples, `${DURATION}_count`, { ...donation, status: '404' })).toBe(1);
    expect(grew(before, samples, `${DURATION}_count`, { ...donation, status: '401' })).toBe(1);
    expect(grew(before, samples, `${DURATION}_count`, { host: 'api', route: 'unmatched', status: '404' })).toBe(1);
    expect(grew(before, samples, `${DURATION}_count`, { host: 'sandbox_api', route: '/v1/donations', status: '401' })).toBe(1);
    // The histogram's buckets are cumulative and end at +Inf = count.
    const inf = total(samples, `${DURATION}_bucket`, { ...donation, status: '200', le: '+Inf' });
    expect(inf).toBe(total(samples, `${DURATION}_count`, { ...donation, status: '200' }));
    expect(total(samples, `${DURATION}_sum`, { ...donation, status: '200' })).toBeGreaterThan(0);

    for (const secret of [id, missing, stray, key]) expect(text).not.toContain(secret);
    expectBoundedLabels(samples, [id, missing, stray, key]);
  });

  it('counts tokens issued by grant type and environment, token errors by OAuth code, and argon2 runs', async () => {
    const client = await server.registerClient({ environment: 'production', redirectUris: [REDIRECT], scopes: ['read_only'] });
    const before = (await scrape()).samples;

    const { tokens, code, callback } = await obtainTokens(server, {
      environment: 'production',
      client,
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only',
      login: staff.users.member,
    });
    expect(tokens.status).toBe(200);
    const refreshed = await tokenRequest(server, 'production', client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token as string,
    });
    expect(refreshed.status).toBe(200);
    const refused = await tokenRequest(server, 'production', client, {
      grant_type: 'authorization_code',
      code: 'x'.repeat(43),
      code_verifier: 'v'.repeat(43),
    });
    expect(refused.body.error).toBe('invalid_grant');
    // Refused before the provider's token route (a secret in the body): counted all the same.
    const inBody = await tokenRequest(server, 'production', client, {
      grant_type: 'refresh_token',
      refresh_token: 'x',
      client_secret: client.client_secret,
    });
    expect(inBody.body.error).toBe('invalid_client');

    const { text, samples } = await scrape();
    const issued = 'almoner_oauth_tokens_issued_total';
    expect(grew(before, samples, issued, { environment: 'production', grant_type: 'authorization_code' })).toBe(1);
    expect(grew(before, samples, issued, { environment: 'production', grant_type: 'refresh_token' })).toBe(1);
    expect(total(samples, issued, { environment: 'sandbox', grant_type: 'authorization_code' })).toBe(0);
    expect(grew(before, samples, 'almoner_oauth_token_errors_total', { environment: 'production', error: 'invalid_grant' })).toBe(1);
    expect(grew(before, samples, 'almoner_oauth_token_errors_total', { environment: 'production', error: 'invalid_client' })).toBe(1);
    expect(total(samples, 'almoner_client_secret_argon2_verifications_total')).toBeGreaterThanOrEqual(1);

    // The provider's endpoints and the hosted pages are named by their fixed paths and templates.
    expect(grew(before, samples, `${DURATION}_count`, { host: 'api', method: 'POST', route: '/auth/oauth/token', status: '200' })).toBe(2);
    expect(grew(before, samples, `${DURATION}_count`, { host: 'api', method: 'POST', route: '/auth/oauth/token', status: '401' })).toBe(2);
    expect(
      grew(before, samples, `${DURATION}_count`, { host: 'dashboard', method: 'GET', route: '/oauth/authorize' }),
    ).toBeGreaterThanOrEqual(1);
    expect(grew(before, samples, `${DURATION}_count`, { host: 'dashboard', method: 'POST', route: '/oauth/interaction/:uid/login' })).toBe(
      1,
    );

    expect(text, 'no raw interaction id in a label').not.toMatch(/\/oauth\/interaction\/(?!:uid)[^/"]/);
    // Providers are rebuilt when the signing keys rotate; the new ones are counted too.
    await server.runtime.oidc.rebuild();
    const again = await tokenRequest(server, 'production', client, {
      grant_type: 'refresh_token',
      refresh_token: refreshed.body.refresh_token as string,
    });
    expect(again.status).toBe(200);
    const afterRotation = (await scrape()).samples;
    expect(grew(samples, afterRotation, issued, { environment: 'production', grant_type: 'refresh_token' })).toBe(1);

    const secrets = [
      client.client_secret,
      client.client_id,
      code,
      tokens.body.access_token as string,
      tokens.body.refresh_token as string,
      refreshed.body.access_token as string,
      callback.searchParams.get('state')!,
    ];
    for (const secret of secrets) expect(text).not.toContain(secret);
    expectBoundedLabels(samples, secrets);
  });
});

describe('configuration', () => {
  it('defaults metrics_allow to loopback, reads both settings from the environment and rejects bad values', () => {
    const defaults = loadConfig({ env: {} });
    expect(defaults.metrics_allow).toEqual(['127.0.0.0/8', '::1']);
    expect(defaults.metrics_listen).toBeUndefined();
    const set = loadConfig({ env: { ALMONER_METRICS_ALLOW: '10.0.0.0/8, fd00::/8', ALMONER_METRICS_LISTEN: '[::1]:9100' } });
    expect(set.metrics_allow).toEqual(['10.0.0.0/8', 'fd00::/8']);
    expect(set.metrics_listen).toBe('[::1]:9100');
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig({ env });
      } catch (error) {
        if (error instanceof ConfigError) return error.problems.join('\n');
        throw error;
      }
      return '';
    };
    expect(problems({ ALMONER_METRICS_ALLOW: '10.0.0.0/33' })).toMatch(
      /^metrics_allow\.0 \(from ALMONER_METRICS_ALLOW\): must be an IP address or CIDR range/,
    );
    expect(problems({ ALMONER_METRICS_LISTEN: 'metrics.internal:9100' })).toMatch(
      /^metrics_listen \(from ALMONER_METRICS_LISTEN\): must be host:port/,
    );
    expect(problems({ ALMONER_METRICS_LISTEN: '0.0.0.0:8080', ALMONER_LISTEN: '0.0.0.0:8080' })).toMatch(
      /metrics_listen.*must differ from every listen address/,
    );
  });
});

describe('who may scrape', () => {
  const get = (app: Awaited<ReturnType<typeof testApp>>['app'], path = '/metrics', host: string = HOSTS.api) =>
    request(app.callback()).get(path).set('Host', host);

  it('answers a caller outside metrics_allow (loopback by default) exactly like a path that does not exist', async () => {
    // The test client connects over loopback; as a trusted proxy it can speak for others.
    const { app } = await testApp(t.db, { trusted_proxies: ['127.0.0.1'] });
    const outside = await get(app).set('X-Forwarded-For', '203.0.113.7');
    const nothing = await get(app, '/metricz').set('X-Forwarded-For', '203.0.113.7');
    expect(outside.status).toBe(404);
    expect(outside.headers['content-type']).toBe(nothing.headers['content-type']);
    expect({ ...outside.body, detail: undefined }).toEqual({ ...nothing.body, detail: undefined });
    expect(outside.text).not.toContain('almoner_');

    const local = await get(app);
    expect(local.status).toBe(200);
    expect(local.headers['content-type']).toBe(CONTENT_TYPE);
    expect((await get(app).set('X-Forwarded-For', '::1')).status).toBe(200);
    expect((await request(app.callback()).post('/metrics').set('Host', HOSTS.api)).status).toBe(404);
    expect((await get(app, '/metrics', HOSTS.dashboard)).status).toBe(404);
  });

  it('lets metrics_allow name the scrapers, and believes X-Forwarded-For only from trusted proxies', async () => {
    const allow = { metrics_allow: ['203.0.113.0/24', 'fd00::/8'] };
    const proxied = (await testApp(t.db, { ...allow, trusted_proxies: ['127.0.0.1'] })).app;
    expect((await get(proxied).set('X-Forwarded-For', '203.0.113.7')).status).toBe(200);
    expect((await get(proxied).set('X-Forwarded-For', 'fd00::1')).status).toBe(200);
    expect((await get(proxied).set('X-Forwarded-For', '198.51.100.1')).status).toBe(404);
    // The list replaces the loopback default.
    expect((await get(proxied)).status).toBe(404);

    const direct = (await testApp(t.db, allow)).app;
    expect((await get(direct).set('X-Forwarded-For', '203.0.113.7')).status).toBe(404);
  });
});

describe('metrics_listen', () => {
  it('moves /metrics to a listener of its own (with /healthz and /readyz), where metrics_allow still applies', async () => {
    const { app, runtime } = await testApp(t.db, { metrics_listen: '127.0.0.1:0' });
    expect((await request(app.callback()).get('/metrics').set('Host', HOSTS.api)).status).toBe(404);
    const admin = runtime.metricsApp!;
    expect(admin).toBeDefined();
    const scraped = await request(admin.callback()).get('/metrics').set('Host', 'metrics.internal:9100');
    expect(scraped.status).toBe(200);
    expect(scraped.headers['content-type']).toBe(CONTENT_TYPE);
    const { samples } = parseExposition(scraped.text);
    // The refused request on the API host was observed, under the fixed path.
    expect(total(samples, `${DURATION}_count`, { host: 'api', route: '/metrics', status: '404' })).toBe(1);
    expect((await request(admin.callback()).get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await request(admin.callback()).get('/readyz')).body).toEqual({ status: 'ready' });
    expect((await request(admin.callback()).get('/v1/donations')).status).toBe(404);

    const closed = (await testApp(t.db, { metrics_listen: '127.0.0.1:0', metrics_allow: ['10.0.0.0/8'] })).runtime.metricsApp!;
    expect((await request(closed.callback()).get('/metrics')).status).toBe(404);
  });

  it('is opened by startServer next to the public listeners and closed with them', async () => {
    const config = testConfig({ database_url: t.url, listen: ['127.0.0.1:0'], metrics_listen: '127.0.0.1:0', demo_data: false });
    const running = await startServer(config, createLogger('silent'));
    try {
      const port = running.metricsListening?.port;
      expect(port).toBeGreaterThan(0);
      const scraped = await httpRequest(`http://127.0.0.1:${port}/metrics`);
      expect(scraped.status).toBe(200);
      expect(scraped.headers['content-type']).toBe(CONTENT_TYPE);
      expect(parseExposition(scraped.body).types.get('process_cpu_user_seconds_total')).toBe('counter');
      const publicPort = running.listening[0]!.port;
      expect((await httpRequest(`http://127.0.0.1:${publicPort}/metrics`, { host: new URL(config.base_url).host })).status).toBe(404);
    } finally {
      await running.close();
    }
    const port = running.metricsListening!.port;
    await expect(httpRequest(`http://127.0.0.1:${port}/metrics`, { timeoutMs: 1_000 })).rejects.toThrow();
  });
});

describe('webhook outbox backlog', () => {
  async function queueDelivery(environment: 'production' | 'sandbox', dueSecondsAgo: number) {
    const subscription = `sub_${crypto.randomBytes(6).toString('hex')}`;
    const event = `evt_${crypto.randomBytes(6).toString('hex')}`;
    await t.db
      .insertInto('event_subscriptions')
      .values({
        id: subscription,
        environment,
        organization_id: staff.orgId,
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
        organization_id: staff.orgId,
        category: 'grant_request.created',
        associated_object_id: 'x',
        associated_object_type: 'grant_request',
      } as never)
      .execute();
    await t.db
      .insertInto('webhook_deliveries')
      .values({
        id: `whd_${crypto.randomBytes(6).toString('hex')}`,
        environment,
        subscription_id: subscription,
        event_id: event,
        next_attempt_at: new Date(Date.now() - dueSecondsAgo * 1000),
      } as never)
      .execute();
  }

  it('reports pending deliveries and how overdue the oldest is, per environment, read at scrape time', async () => {
    // Not started: no dispatcher takes the deliveries away.
    const { app } = await testApp(t.db);
    await queueDelivery('production', 90);
    await queueDelivery('production', -3600);
    const { samples } = parseExposition((await request(app.callback()).get('/metrics').set('Host', HOSTS.api)).text);
    expect(total(samples, 'almoner_webhook_deliveries_pending', { environment: 'production' })).toBe(2);
    expect(total(samples, 'almoner_webhook_deliveries_pending', { environment: 'sandbox' })).toBe(0);
    expect(total(samples, 'almoner_webhook_delivery_lag_seconds', { environment: 'production' })).toBeGreaterThanOrEqual(89);
    expect(total(samples, 'almoner_webhook_delivery_lag_seconds', { environment: 'sandbox' })).toBe(0);
    await t.db.deleteFrom('webhook_deliveries').execute();
  });

  it('leaves the backlog out, and still answers promptly, when the database is slow or down', async () => {
    const { app, withDatabase } = await testApp(t.db);
    // Another session holds the table: the backlog query waits on its lock.
    const blocker = createDatabase({ url: t.url, poolMax: 1 });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const holder = blocker.transaction().execute(async (trx) => {
      await sql`lock table webhook_deliveries in access exclusive mode`.execute(trx);
      locked();
      await held;
    });
    try {
      await lockTaken;
      const started = Date.now();
      const slow = await request(app.callback()).get('/metrics').set('Host', HOSTS.api);
      expect(slow.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(4_500);
      const { samples, types } = parseExposition(slow.text);
      expect(types.get('almoner_webhook_deliveries_pending')).toBe('gauge');
      expect(total(samples, 'almoner_webhook_deliveries_pending')).toBeUndefined();
      expect(total(samples, 'almoner_metrics_collect_failures_total', { collector: 'webhook_outbox' })).toBe(1);
      expect(total(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    } finally {
      release();
      await holder;
      await blocker.destroy();
    }

    const down = createDatabase({ url: 'postgres://postgres@127.0.0.1:1/none', poolMax: 1 });
    try {
      const res = await request(withDatabase(down).callback()).get('/metrics').set('Host', HOSTS.api);
      expect(res.status).toBe(200);
      const { samples } = parseExposition(res.text);
      expect(total(samples, 'almoner_webhook_deliveries_pending')).toBeUndefined();
      expect(total(samples, 'almoner_metrics_collect_failures_total', { collector: 'webhook_outbox' })).toBe(1);
    } finally {
      await down.destroy();
    }
  });
});
