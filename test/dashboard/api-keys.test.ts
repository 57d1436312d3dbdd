import { describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/gateway/api-keys/service.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { apiRequest } from '../helpers/gateway.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;
const keyOf = (html: string) => /id="new-key"[^>]*>([^<]+)</.exec(html)?.[1];

describe('the API keys page', () => {
  it('creates a key of its environment, shows it once, and revoking it stops it at once', async () => {
    const s = await createStaff(t.db);
    const session = await dashboardSession(server, 'sandbox', s.users.admin);
    const page = await session.get(`/orgs/${s.ein}/api-keys`);
    expect(page.html).toContain('Sandbox API keys');
    expect(page.html).toContain('No sandbox API keys yet.');
    const created = await session.browser.submit(page, '/api-keys');
    expect(created.status).toBe(201);
    const key = keyOf(created.html)!;
    expect(key).toMatch(/^alm_test_[A-Za-z0-9]{32}$/);
    // The key works on the sandbox API, for this organization.
    expect((await apiRequest(server, 'sandbox', 'GET', '/v1/donations?limit=1', { bearer: key })).status).toBe(200);
    // Shown once: the list shows its prefix only, and the database holds its hash only.
    const listed = await session.get(`/orgs/${s.ein}/api-keys`);
    expect(listed.html).not.toContain(key);
    expect(listed.html).toContain(`${key.slice(0, 13)}…`);
    const row = await t.db.selectFrom('api_keys').selectAll().where('organization_id', '=', s.orgId).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(key);
    const audit = await t.db.selectFrom('audit_events').selectAll().where('event', '=', 'api_key.created').where('organization_id', '=', s.orgId).executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ actor_user_id: s.users.admin.id, environment: 'sandbox', details: { id: row.id } });

    const revoked = await session.browser.submit(listed, '/api-keys/revoke');
    expect(revoked.html).toContain(`The key ${key.slice(0, 13)}… is revoked`);
    expect((await apiRequest(server, 'sandbox', 'GET', '/v1/donations?limit=1', { bearer: key })).status).toBe(401);
  });

  it('never lets the answer holding a new key be stored by a cache', async () => {
    const s = await createStaff(t.db);
    const session = await dashboardSession(server, 'production', s.users.owner);
    const page = await session.get(`/orgs/${s.ein}/api-keys`);
    const response = await fetch(`${session.origin}/orgs/${s.ein}/api-keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.browser.cookieHeader(new URL(session.origin)), origin: session.origin },
      body: new URLSearchParams({ csrf: csrfOf(page.html) }),
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('cache-control')).toContain('no-store');
    expect(keyOf(await response.text())).toMatch(/^alm_live_/);
  });

  it('lists and revokes only this organization’s keys of this environment; anything else is 404', async () => {
    const s = await createStaff(t.db);
    const other = await createStaff(t.db);
    const sandboxKey = await createApiKey(t.db, { org: s.ein, environment: 'sandbox' });
    const othersKey = await createApiKey(t.db, { org: other.ein, environment: 'production' });
    const session = await dashboardSession(server, 'production', s.users.owner);
    const page = await session.get(`/orgs/${s.ein}/api-keys`);
    expect(page.html).not.toContain(sandboxKey.id);
    expect(page.html).toContain('sandbox dashboard');
    for (const id of [sandboxKey.id, othersKey.id, 'key_0123']) {
      const refused = await session.browser.request(`${session.origin}/orgs/${s.ein}/api-keys/revoke`, { method: 'POST', form: { csrf: csrfOf(page.html), key: id } });
      expect(refused.status).toBe(404);
    }
    const live = await t.db.selectFrom('api_keys').select('id').where('revoked_at', 'is', null).where('id', 'in', [sandboxKey.id, othersKey.id]).execute();
    expect(live).toHaveLength(2);
  });

  it('is for Owners and Admins only: a Member gets 403 for the page and for each form', async () => {
    const s = await createStaff(t.db);
    const key = await createApiKey(t.db, { org: s.ein, environment: 'production' });
    const session = await dashboardSession(server, 'production', s.users.member);
    expect((await session.get(`/orgs/${s.ein}/api-keys`)).status).toBe(403);
    const csrf = csrfOf((await session.get('/account')).html);
    expect((await session.browser.request(`${session.origin}/orgs/${s.ein}/api-keys`, { method: 'POST', form: { csrf } })).status).toBe(403);
    expect((await session.browser.request(`${session.origin}/orgs/${s.ein}/api-keys/revoke`, { method: 'POST', form: { csrf, key: key.id } })).status).toBe(403);
    expect(await t.db.selectFrom('api_keys').select('id').where('organization_id', '=', s.orgId).execute()).toHaveLength(1);
  });
});
