import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import {
  childEnv,
  ephemeralUrlEnv,
  makeDataDir,
  PROJECT_ROOT,
  removeDataDir,
  request,
  spawnServer,
  startServer,
  withScheme,
  type ServerProcess,
} from '../helpers/process.js';

/**
 * The image's HEALTHCHECK, scripts/healthcheck.mjs (docs/operations.md, "Health checks"), run
 * as the image runs it: with ALMONER_LISTEN naming the port and, when the process terminates
 * TLS itself, ALMONER_TLS_CERT. It asks /healthz over HTTPS then (a plain-HTTP request to a TLS
 * port gets no answer), over plain HTTP behind a proxy, and fails when nothing answers.
 */

let t: TestDatabase;
let dataDir: string;
let tlsDir: string;
let server: ServerProcess | undefined;

beforeAll(async () => {
  t = await createTestDatabase();
  dataDir = makeDataDir();
  tlsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'almoner-healthcheck-tls-'));
});

afterEach(async () => {
  await server?.kill();
  server = undefined;
});

afterAll(async () => {
  await removeDataDir(dataDir);
  fs.rmSync(tlsDir, { recursive: true, force: true });
  await t?.drop();
});

function production(): Record<string, string> {
  return {
    ...ephemeralUrlEnv('https'),
    ALMONER_PROFILE: 'production',
    DATABASE_URL: t.url,
    ALMONER_SMTP_URL: 'smtp://127.0.0.1:9',
    ALMONER_MAIL_FROM: 'Almoner <no-reply@example.org>',
    ALMONER_DATA_DIR: dataDir,
  };
}

/** `node scripts/healthcheck.mjs` from the project root with only `env` of Almoner's variables. */
function healthcheck(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['scripts/healthcheck.mjs'], {
      cwd: PROJECT_ROOT,
      env: childEnv(env),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

const portOf = (url: string) => new URL(url).port;

describe('the image health check (scripts/healthcheck.mjs)', () => {
  it('with its own TLS: asks over HTTPS and passes; a plain-HTTP request to the TLS port gets no answer', async () => {
    const cert = path.join(tlsDir, 'cert.pem');
    const key = path.join(tlsDir, 'key.pem');
    const made = spawnSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=api.example.org'],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(made.status, `openssl: ${made.stderr}`).toBe(0);
    server = await startServer({ env: { ...production(), ALMONER_TLS_CERT: cert, ALMONER_TLS_KEY: key } });
    const port = portOf(server.urls.api);

    const checked = await healthcheck({ ALMONER_LISTEN: `0.0.0.0:${port}`, ALMONER_TLS_CERT: cert });
    expect(checked, checked.stderr).toEqual({ code: 0, stderr: '' });

    // What the image asked before, plain HTTP, is not answered on a TLS port: the reason for the script.
    await expect(request(`http://127.0.0.1:${port}/healthz`, { timeoutMs: 3_000 })).rejects.toThrow();
    const plain = await healthcheck({ ALMONER_LISTEN: `0.0.0.0:${port}` });
    expect(plain.code, plain.stderr).toBe(1);
    expect(plain.stderr).toMatch(new RegExp(`^healthcheck: http://127\\.0\\.0\\.1:${port}/healthz: `));
  }, 120_000);

  it('behind a TLS-terminating proxy: asks over plain HTTP on loopback and passes; fails when nothing listens', async () => {
    server = spawnServer({ env: { ...production(), ALMONER_TRUSTED_PROXIES: '10.0.0.0/8' } });
    await server.waitReady(60_000, (ready) => withScheme(ready.urls, 'http').api);
    const port = portOf(server.urls.api);

    const checked = await healthcheck({ ALMONER_LISTEN: `0.0.0.0:${port}` });
    expect(checked, checked.stderr).toEqual({ code: 0, stderr: '' });

    expect((await server.stop('SIGTERM', 15_000)).code, server.output()).toBe(0);
    const stopped = await healthcheck({ ALMONER_LISTEN: `0.0.0.0:${port}` });
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toContain('ECONNREFUSED');
  }, 120_000);
});
