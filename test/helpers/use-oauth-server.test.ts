import fs from 'node:fs';
import http from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import { startOAuthServer } from './oauth-server.js';
import { StatementProbe } from './statement-probe.js';
import { useOAuthServer } from './use-oauth-server.js';

/** The test setup itself: in-process servers bind before their config is built, and the fixture's options. */

const probe = new StatementProbe();
const {
  testDatabase: t,
  server,
  staff,
  allStaff,
  clients: { sandboxApp },
  peers: { peer },
} = useOAuthServer({
  staff: 2,
  plugins: [probe],
  config: { refresh_reuse_grace_seconds: 7 },
  clients: { sandboxApp: { environment: 'sandbox', name: 'Fixture App', scopes: ['read_only'] } },
  peers: { peer: { trusted_proxies: ['127.0.0.1/32'] } },
});

describe('startOAuthServer', () => {
  it('serves on the four ports it bound, which are the ones its config names', async () => {
    const { api, sandboxApi, dashboard, sandboxDashboard } = server.urls;
    expect([
      server.config.base_url,
      server.config.sandbox_base_url,
      server.config.dashboard_url,
      server.config.sandbox_dashboard_url,
    ]).toEqual([api, sandboxApi, dashboard, sandboxDashboard]);
    expect(new Set([api, sandboxApi, dashboard, sandboxDashboard]).size).toBe(4);
    for (const url of [api, sandboxApi, dashboard, sandboxDashboard]) {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    }
  });

  it('closes the ports it bound when the app cannot be built from its config', async () => {
    // Watches (and calls through to) the real createServer, to see the listeners it made.
    const created = vi.spyOn(http, 'createServer');
    try {
      await expect(startOAuthServer(t.db, { base_url: 'not a url' })).rejects.toThrow(/base_url/);
      const made = created.mock.results.map((r) => r.value as http.Server);
      expect(made).toHaveLength(4);
      expect(made.map((s) => s.listening)).toEqual([false, false, false, false]);
    } finally {
      created.mockRestore();
    }
  });
});

describe('useOAuthServer', () => {
  it('fills in the members a file destructured at its top level', () => {
    expect(t.db).toBeDefined();
    expect(server.config.refresh_reuse_grace_seconds).toBe(7);
    expect(allStaff).toHaveLength(2);
    expect(allStaff[0]).toBe(staff);
    expect(allStaff[0].ein).not.toBe(allStaff[1].ein);
  });

  it('creates each nonprofit with one user per role', async () => {
    for (const s of allStaff) {
      const roles = await t.db.selectFrom('memberships').select('role').where('organization_id', '=', s.orgId).orderBy('role').execute();
      expect(roles.map((r) => r.role)).toEqual(['admin', 'member', 'owner', 'read_only']);
    }
  });

  it('registers the clients it was given, as given', async () => {
    const row = await t.db.selectFrom('oauth_clients').selectAll().where('client_id', '=', sandboxApp.client_id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ environment: 'sandbox', name: 'Fixture App', scopes: ['read_only'] });
    expect(sandboxApp.client_secret).toBeTruthy();
  });

  it('starts peers over the same database and clients file, with their own settings on top of the shared ones', async () => {
    expect(peer.config.clients_file).toBe(server.config.clients_file);
    expect(peer.config.refresh_reuse_grace_seconds).toBe(7);
    expect(peer.config.trusted_proxies).toEqual(['127.0.0.1/32']);
    expect(server.config.trusted_proxies).toEqual([]);
    expect(new Set([...Object.values(server.urls), ...Object.values(peer.urls)]).size).toBe(8);
    // The clients file the peer syncs from holds the client the fixture registered through the server.
    expect(fs.readFileSync(peer.config.clients_file, 'utf8')).toContain(sandboxApp.client_id);
  });

  it('puts the plugins on the server’s database handle only', async () => {
    probe.reset();
    await t.db.selectFrom('organizations').select('id').execute();
    expect(probe.statements).toEqual([]);
    expect((await fetch(`${server.urls.api}/readyz`)).status).toBe(200);
    expect(probe.statements.length).toBeGreaterThan(0);
  });
});
