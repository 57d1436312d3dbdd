import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { bindEphemeralUrls } from '../../src/server/ephemeral-urls.js';
import { closeServers } from '../../src/server/listeners.js';
import { startServer } from '../../src/server/start.js';
import { tempDir, testConfig } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { request } from '../helpers/process.js';

/**
 * Port 0 in a public URL: the server binds an ephemeral port for it before building anything
 * from the configuration, serves the URL with that port, and announces it in ready_file.
 */

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

const EPHEMERAL = 'http://127.0.0.1:0';

describe('public URLs with port 0', () => {
  it('are bound first and served with the bound port: issuer, host dispatch and ready file agree', async () => {
    const readyFile = path.join(tempDir(), 'ready.json');
    const config = testConfig({
      database_url: t.url,
      demo_data: false,
      ready_file: readyFile,
      base_url: EPHEMERAL,
      sandbox_base_url: EPHEMERAL,
      dashboard_url: EPHEMERAL,
      sandbox_dashboard_url: 'http://localhost:0',
    });
    const running = await startServer(config, createLogger('silent'));
    let closed = false;
    try {
      const served = running.config;
      const urls = [served.base_url, served.sandbox_base_url, served.dashboard_url, served.sandbox_dashboard_url];
      const ports = urls.map((url) => Number(new URL(url).port));
      for (const port of ports) expect(port).toBeGreaterThan(0);
      expect(new Set(ports).size, 'each port-0 URL gets a port of its own').toBe(4);
      expect(urls.map((url) => new URL(url).hostname)).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.1', 'localhost']);
      expect(running.listening.map((address) => address.port).sort()).toEqual([...ports].sort());

      expect(JSON.parse(fs.readFileSync(readyFile, 'utf8'))).toEqual({
        pid: process.pid,
        profile: 'dev',
        urls: {
          base_url: served.base_url,
          sandbox_base_url: served.sandbox_base_url,
          dashboard_url: served.dashboard_url,
          sandbox_dashboard_url: served.sandbox_dashboard_url,
        },
        listening: running.listening,
        metrics_listening: null,
      });

      // The providers were built from the bound URLs: the issuer is the URL served, and the
      // authorization endpoint is on the dashboard's bound port.
      const discovery = await request(`${served.sandbox_base_url}/.well-known/openid-configuration`);
      expect(discovery.status, discovery.body).toBe(200);
      expect(discovery.json()).toMatchObject({
        issuer: served.sandbox_base_url,
        authorization_endpoint: `${served.sandbox_dashboard_url}/oauth/sandbox/authorize`,
      });
      // Host dispatch knows the bound authorities (an unknown one would be 421).
      const dashboard = await request(`${served.dashboard_url}/`, { headers: { accept: 'application/json' } });
      expect(dashboard.status, dashboard.body).toBe(200);
      expect(dashboard.json()).toMatchObject({ surface: 'dashboard', dashboard_url: served.dashboard_url });

      await running.close();
      closed = true;
      expect(fs.existsSync(readyFile), 'the ready file goes with the server').toBe(false);
      await expect(request(`${served.base_url}/healthz`, { timeoutMs: 2_000 })).rejects.toThrow();
    } finally {
      if (!closed) await running.close();
    }
  });

  it('hold requests that arrive before the app exists and hand them to it (a replacement cluster worker gets connections at once)', async () => {
    const binding = await bindEphemeralUrls(testConfig({ base_url: EPHEMERAL }), undefined, { ms: 60_000, max: 2 });
    try {
      const url = binding.config.base_url;
      const first = request(`${url}/first`, { timeoutMs: 30_000 });
      const second = request(`${url}/second`, { timeoutMs: 30_000 });
      // Two wait; a third past the limit hears "starting" at once, while the app still does not exist.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const third = await request(`${url}/third`, { timeoutMs: 30_000 });
      expect(third.status).toBe(503);
      expect(third.headers['retry-after']).toBe('1');
      expect(third.json()).toMatchObject({ status: 503, code: 'unavailable' });

      binding.attach((req, res) => res.end(`served ${req.url}`));
      const answers = await Promise.all([first, second]);
      expect(answers.map((answer) => [answer.status, answer.body])).toEqual([
        [200, 'served /first'],
        [200, 'served /second'],
      ]);
    } finally {
      await closeServers(binding.servers, 0);
    }
  });

  it('answer a held request 503 once it has waited the hold time', async () => {
    const binding = await bindEphemeralUrls(testConfig({ base_url: EPHEMERAL }), undefined, { ms: 100, max: 10 });
    try {
      const answer = await request(`${binding.config.base_url}/late`, { timeoutMs: 30_000 });
      expect(answer.status).toBe(503);
      expect(answer.json()).toMatchObject({ detail: 'The server is starting.' });
    } finally {
      await closeServers(binding.servers, 0);
    }
  });
});
