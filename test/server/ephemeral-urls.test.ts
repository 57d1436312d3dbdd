import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
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
        urls: { base_url: served.base_url, sandbox_base_url: served.sandbox_base_url, dashboard_url: served.dashboard_url, sandbox_dashboard_url: served.sandbox_dashboard_url },
        listening: running.listening,
        metrics_listening: null,
      });

      // The providers were built from the bound URLs: the issuer is the URL served, and the
      // authorization endpoint is on the dashboard's bound port.
      const discovery = await request(`${served.sandbox_base_url}/.well-known/openid-configuration`);
      expect(discovery.status, discovery.body).toBe(200);
      expect(discovery.json()).toMatchObject({ issuer: served.sandbox_base_url, authorization_endpoint: `${served.sandbox_dashboard_url}/oauth/sandbox/authorize` });
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
});
