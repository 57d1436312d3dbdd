import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import {
  allUrls,
  ephemeralUrlEnv,
  makeDataDir,
  removeDataDir,
  request,
  spawnServer,
  startServer,
  withScheme,
  type ServerProcess,
} from '../helpers/process.js';

/** The production profile: refused starts name every gap; HTTPS only, by proxy or own TLS. */

let t: TestDatabase;
let dataDir: string;
let tlsDir: string | undefined;
let server: ServerProcess | undefined;

beforeAll(async () => {
  t = await createTestDatabase();
  dataDir = makeDataDir();
});

afterEach(async () => {
  await server?.kill();
  server = undefined;
});

afterAll(async () => {
  await server?.kill();
  await removeDataDir(dataDir);
  if (tlsDir) fs.rmSync(tlsDir, { recursive: true, force: true });
  await t?.drop();
});

/** The four URLs on ports the server binds itself (port 0), as `scheme` in the configuration. */
function settings(scheme: 'http' | 'https') {
  return { env: { ...ephemeralUrlEnv(scheme), ALMONER_DATA_DIR: dataDir } };
}

function problemOf(output: string): string {
  return `stderr was:\n${output}`;
}

describe('production profile', () => {
  it('refuses to start without DATABASE_URL, HTTPS, an SMTP server and a From address, naming all at once', async () => {
    const { env } = settings('https');
    server = spawnServer({ env: { ...env, ALMONER_PROFILE: 'production' } });
    const status = await server.waitExit(20_000);
    expect(status.code, server.output()).not.toBe(0);
    expect(status.code, server.output()).not.toBeNull();
    const stderr = server.stderr;
    expect(stderr, problemOf(stderr)).toContain('database_url');
    expect(stderr, problemOf(stderr)).toContain('DATABASE_URL');
    expect(stderr, problemOf(stderr)).toContain('ALMONER_TLS_CERT');
    expect(stderr, problemOf(stderr)).toContain('ALMONER_TRUSTED_PROXIES');
    expect(stderr, problemOf(stderr)).toContain('ALMONER_SMTP_URL');
    expect(stderr, problemOf(stderr)).toContain('mail_from');
    expect(stderr, problemOf(stderr)).toContain('ALMONER_MAIL_FROM');
    expect(stderr, problemOf(stderr)).not.toContain('    at ');
    // It refused before touching any database: no embedded PostgreSQL was initialised.
    expect(fs.existsSync(path.join(dataDir, 'pg'))).toBe(false);
  }, 60_000);

  it('refuses an invalid setting, naming the key and the variable it came from', async () => {
    const { env } = settings('http');
    server = spawnServer({ env: { ...env, ALMONER_BASE_URL: 'not-a-url' } });
    const status = await server.waitExit(20_000);
    expect(status.code, server.output()).not.toBe(0);
    expect(status.code, server.output()).not.toBeNull();
    expect(server.stderr, problemOf(server.stderr)).toContain('base_url');
    expect(server.stderr, problemOf(server.stderr)).toContain('ALMONER_BASE_URL');
    expect(server.stderr, problemOf(server.stderr)).not.toContain('    at ');
    expect(fs.existsSync(path.join(dataDir, 'pg'))).toBe(false);
  }, 60_000);

  it('behind a trusted proxy: plain HTTP is refused with 403, loopback health checks are exempt', async () => {
    const { env } = settings('https');
    // Configured as https (the proxy terminates TLS); the test reaches the process in plain HTTP.
    server = spawnServer({
      env: {
        ...env,
        ALMONER_PROFILE: 'production',
        DATABASE_URL: t.url,
        ALMONER_SMTP_URL: 'smtp://127.0.0.1:9',
        ALMONER_MAIL_FROM: 'Almoner <no-reply@example.org>',
        ALMONER_TRUSTED_PROXIES: '10.0.0.0/8',
      },
    });
    await server.waitReady(45_000, (ready) => withScheme(ready.urls, 'http').api);
    const urls = withScheme(server.urls, 'http');
    expect(server.urls.api, 'the configuration keeps the https scheme with the bound port').toMatch(/^https:\/\/127\.0\.0\.1:[1-9]\d*$/);

    const refused = await request(`${urls.api}/v1/anything`);
    expect(refused.status, refused.body).toBe(403);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.json()).toMatchObject({ title: 'HTTPS required', status: 403 });
    expect(refused.headers['x-request-id']).toMatch(/\S{8,}/);
    expect(refused.headers.location, 'never a redirect').toBeUndefined();

    // X-Forwarded-Proto from a peer that is not a trusted proxy is not believed.
    const forged = await request(`${urls.api}/v1/anything`, { headers: { 'x-forwarded-proto': 'https' } });
    expect(forged.status, forged.body).toBe(403);

    for (const url of allUrls(urls)) {
      for (const probe of ['/healthz', '/readyz']) {
        const res = await request(`${url}${probe}`);
        expect(res.status, `GET ${url}${probe}: ${res.body}`).toBe(200);
      }
      const page = await request(`${url}/`);
      expect(page.status, `GET ${url}/ over plain HTTP: ${page.body}`).toBe(403);
    }

    // No banner and no demo data in production.
    expect(server.stdout).not.toContain('Demo users');
    const demo = await t.db.selectFrom('organizations').select('ein').where('ein', '=', '123456789').execute();
    expect(demo).toEqual([]);

    const status = await server.stop('SIGTERM', 15_000);
    expect(status, server.output()).toEqual({ code: 0, signal: null });
  }, 90_000);

  it('with its own TLS certificate: serves HTTPS with Strict-Transport-Security, and no plain HTTP, loopback health checks included', async () => {
    tlsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'almoner-e2e-tls-'));
    const cert = path.join(tlsDir, 'cert.pem');
    const key = path.join(tlsDir, 'key.pem');
    const made = spawnSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1'],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(made.status, `openssl: ${made.stderr}`).toBe(0);

    const { env } = settings('https');
    server = await startServer({
      env: {
        ...env,
        ALMONER_PROFILE: 'production',
        DATABASE_URL: t.url,
        ALMONER_SMTP_URL: 'smtp://127.0.0.1:9',
        ALMONER_MAIL_FROM: 'Almoner <no-reply@example.org>',
        ALMONER_TLS_CERT: cert,
        ALMONER_TLS_KEY: key,
      },
    });
    const urls = server.urls;

    for (const url of allUrls(urls)) {
      const ready = await request(`${url}/readyz`);
      expect(ready.status, `GET ${url}/readyz: ${ready.body}`).toBe(200);
      expect(ready.headers['strict-transport-security']).toMatch(/max-age=\d+/);
    }
    // Over TLS the API is reachable (a 404 problem, not the 403 "HTTPS required").
    const api = await request(`${urls.api}/v1/anything`);
    expect(api.status, api.body).toBe(404);
    expect(api.headers['strict-transport-security']).toMatch(/max-age=\d+/);
    // Its ports speak only TLS: a plain-HTTP health check from loopback gets no HTTP answer at all
    // (docs/operations.md, "Production profile" and "Health checks": ask over HTTPS, or on metrics_listen).
    for (const probe of ['/healthz', '/readyz'])
      await expect(request(`${withScheme(urls, 'http').api}${probe}`, { timeoutMs: 3_000 }), probe).rejects.toThrow();

    const status = await server.stop('SIGTERM', 15_000);
    expect(status, server.output()).toEqual({ code: 0, signal: null });
  }, 90_000);
});
