import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/database.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { HOSTS, testApp } from '../helpers/app.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

function expectProblem(res: request.Response, status: number, title: string) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  expect(res.body).toMatchObject({ type: 'about:blank', title, status });
}

describe('host routing', () => {
  it.each([
    ['api', 'production', 'api'],
    ['sandbox_api', 'sandbox', 'api'],
    ['dashboard', 'production', 'dashboard'],
    ['sandbox_dashboard', 'sandbox', 'dashboard'],
  ] as const)('sends Host %s to the %s %s app', async (host, environment, surface) => {
    const { app } = await testApp(t.db);
    const res = await request(app.callback()).get('/').set('Host', HOSTS[host]);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ surface, environment });
  });

  it('matches the Host case-insensitively and with an explicit default port', async () => {
    const { app } = await testApp(t.db, { base_url: 'https://API.example.org' });
    const res = await request(app.callback()).get('/').set('Host', 'api.EXAMPLE.org:443');
    expect(res.body).toMatchObject({ surface: 'api', environment: 'production' });
  });

  it('answers an unknown Host with 421 problem+json, health paths included', async () => {
    const { app } = await testApp(t.db);
    for (const path of ['/', '/healthz', '/readyz', '/v1/donations']) {
      const res = await request(app.callback()).get(path).set('Host', 'evil.example');
      expectProblem(res, 421, 'Misdirected Request');
    }
  });

  it('answers an unknown path with a 404 problem and a wrong method with 405', async () => {
    const { app } = await testApp(t.db);
    expectProblem(await request(app.callback()).get('/no/such/thing').set('Host', HOSTS.api), 404, 'Not Found');
    const res = await request(app.callback()).delete('/').set('Host', HOSTS.api);
    expectProblem(res, 405, 'Method Not Allowed');
    expect(res.headers.allow).toContain('GET');
  });
});

describe('health', () => {
  it('serves /healthz and /readyz on all four hosts', async () => {
    const { app } = await testApp(t.db);
    for (const host of Object.values(HOSTS)) {
      const live = await request(app.callback()).get('/healthz').set('Host', host);
      expect(live.status).toBe(200);
      expect(live.body).toEqual({ status: 'ok' });
      const ready = await request(app.callback()).get('/readyz').set('Host', host);
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({ status: 'ready' });
    }
  });

  it('fails /readyz with a 503 problem while the database is unreachable, and keeps /healthz up', async () => {
    const down = createDatabase({ url: 'postgres://nobody@127.0.0.1:1/none' });
    try {
      const app = (await testApp(t.db)).withDatabase(down);
      const ready = await request(app.callback()).get('/readyz').set('Host', HOSTS.api);
      expectProblem(ready, 503, 'Service Unavailable');
      expect(ready.headers['retry-after']).toBe('5');
      expect((await request(app.callback()).get('/healthz').set('Host', HOSTS.api)).status).toBe(200);
    } finally {
      await down.destroy();
    }
  });

  it('answers a local probe addressed to a loopback authority the URLs do not name', async () => {
    const { app } = await testApp(t.db, {
      base_url: 'https://api.example.org',
      sandbox_base_url: 'https://api.sandbox.example.org',
      dashboard_url: 'https://dash.example.org',
      sandbox_dashboard_url: 'https://dash.sandbox.example.org',
    });
    expect((await request(app.callback()).get('/healthz').set('Host', '127.0.0.1:8080')).status).toBe(200);
    expectProblem(await request(app.callback()).get('/').set('Host', '127.0.0.1:8080'), 421, 'Misdirected Request');
  });
});

describe('static files of the dashboards', () => {
  it('serves the favicon like the stylesheet, and every page links it', async () => {
    const { app } = await testApp(t.db);
    for (const host of [HOSTS.dashboard, HOSTS.sandbox_dashboard]) {
      const icon = await request(app.callback()).get('/static/favicon.svg').set('Host', host).buffer(true);
      expect(icon.status).toBe(200);
      expect(icon.headers['content-type']).toBe('image/svg+xml');
      expect(icon.headers['cache-control']).toBe('public, max-age=3600');
      expect(String(icon.body)).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      const css = await request(app.callback()).get('/static/almoner.css').set('Host', host);
      expect(css.headers['cache-control']).toBe(icon.headers['cache-control']);
    }
    const link = '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">';
    // A hosted page, an error page and the API reference.
    for (const path of ['/sign-in', '/no/such/page', '/docs/api']) {
      const page = await request(app.callback()).get(path).set('Host', HOSTS.dashboard).set('Accept', 'text/html');
      expect(page.text, path).toContain(link);
    }
  });
});

describe('every response', () => {
  it('carries X-Request-Id, keeping a well-formed incoming id from a trusted proxy only', async () => {
    const { app } = await testApp(t.db);
    const direct = await request(app.callback()).get('/healthz').set('Host', HOSTS.api).set('X-Request-Id', 'lb-1234567890abcdef');
    expect(direct.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const behindProxy = (await testApp(t.db, { trusted_proxies: ['127.0.0.1/32', '::1/128'] })).app;
    const kept = await request(behindProxy.callback()).get('/healthz').set('Host', HOSTS.api).set('X-Request-Id', 'lb-1234567890abcdef');
    expect(kept.headers['x-request-id']).toBe('lb-1234567890abcdef');
    const replaced = await request(behindProxy.callback())
      .get('/healthz')
      .set('Host', HOSTS.api)
      .set('X-Request-Id', 'bad id\twith spaces');
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const errored = await request(app.callback()).get('/missing').set('Host', HOSTS.dashboard);
    expect(errored.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('carries the security headers', async () => {
    const { app } = await testApp(t.db);
    const res = await request(app.callback()).get('/').set('Host', HOSTS.dashboard);
    expect(res.headers).toMatchObject({
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
    });
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['strict-transport-security']).toBeUndefined();
  });
});

describe('production profile: HTTPS only', () => {
  const production = (proxies: string) => ({
    ALMONER_PROFILE: 'production',
    DATABASE_URL: 'postgres://unused/x',
    ALMONER_SMTP_URL: 'smtp://127.0.0.1:9',
    ALMONER_MAIL_FROM: 'Almoner <no-reply@example.org>',
    ALMONER_TRUSTED_PROXIES: proxies,
  });

  it('refuses plain HTTP with a 403 problem and never redirects', async () => {
    const { app } = await testApp(t.db, {}, production('10.0.0.0/8'));
    const res = await request(app.callback()).get('/').set('Host', HOSTS.api);
    expectProblem(res, 403, 'HTTPS required');
    expect(res.headers.location).toBeUndefined();
  });

  it('ignores X-Forwarded-Proto from a peer that is not a trusted proxy', async () => {
    const { app } = await testApp(t.db, {}, production('10.0.0.0/8'));
    const res = await request(app.callback()).get('/').set('Host', HOSTS.api).set('X-Forwarded-Proto', 'https');
    expectProblem(res, 403, 'HTTPS required');
  });

  it('believes X-Forwarded-Proto from a trusted proxy, and then sends HSTS', async () => {
    const { app } = await testApp(t.db, {}, production('127.0.0.1/32, ::1/128'));
    const ok = await request(app.callback()).get('/').set('Host', HOSTS.api).set('X-Forwarded-Proto', 'https');
    expect(ok.status).toBe(200);
    expect(ok.headers['strict-transport-security']).toMatch(/max-age=\d+/);
    const plain = await request(app.callback()).get('/').set('Host', HOSTS.api).set('X-Forwarded-Proto', 'http');
    expectProblem(plain, 403, 'HTTPS required');
  });

  it('still answers loopback health checks over plain HTTP', async () => {
    const { app } = await testApp(t.db, {}, production('10.0.0.0/8'));
    expect((await request(app.callback()).get('/healthz').set('Host', HOSTS.api)).status).toBe(200);
    expect((await request(app.callback()).get('/readyz').set('Host', HOSTS.sandbox_dashboard)).status).toBe(200);
  });
});
