import { describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/api-keys/service.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { apiRequest } from '../helpers/gateway.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;
const keyOf = (html: string) => /id="new-key"[^>]*>([^<]+)</.exec(html)?.[1];
/** The EIN as the pages write it (12-3456789); createStaff's is the nine digits. */
const dashed = (ein: string) => `${ein.slice(0, 2)}-${ein.slice(2)}`;

describe('the API keys page', () => {
  it('creates a key of its environment, shows it once, and revoking it stops it at once', async () => {
    const s = await createStaff(t.db);
    const session = await dashboardSession(server, 'sandbox', s.users.admin);
    const page = await session.get(`/orgs/${s.ein}/api-keys`);
    expect(page.html).toContain('Sandbox API keys');
    expect(page.html).toContain('No sandbox API keys yet.');
    const created = await session.browser.submit(page, '/api-keys', { name: 'Billing server' });
    // Shown on the page the form redirects to (post/redirect/get), not in the form's own answer.
    expect(created.status).toBe(200);
    expect(created.url.pathname).toBe(`/orgs/${dashed(s.ein)}/api-keys`);
    expect(created.html).toContain('Your new key, Billing server.');
    const key = keyOf(created.html)!;
    expect(key).toMatch(/^alm_test_[A-Za-z0-9]{32}$/);
    // The key works on the sandbox API, for this organization.
    expect((await apiRequest(server, 'sandbox', 'GET', '/v1/donations?limit=1', { bearer: key })).status).toBe(200);
    // Shown once: the list shows its prefix only, and the database holds its hash only.
    const listed = await session.get(`/orgs/${s.ein}/api-keys`);
    expect(listed.html).not.toContain(key);
    expect(listed.html).toContain(`${key.slice(0, 13)}…`);
    expect(listed.html).toContain('Billing server');
    const row = await t.db.selectFrom('api_keys').selectAll().where('organization_id', '=', s.orgId).executeTakeFirstOrThrow();
    expect(row.name).toBe('Billing server');
    expect(JSON.stringify(row)).not.toContain(key);
    const audit = await t.db
      .selectFrom('audit_events')
      .selectAll()
      .where('event', '=', 'api_key.created')
      .where('organization_id', '=', s.orgId)
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({
      actor_user_id: s.users.admin.id,
      environment: 'sandbox',
      details: { id: row.id, name: 'Billing server' },
    });

    // Revoking asks first, on a page of its own, whose form does it.
    const confirm = await session.get(/href="([^"]+\/revoke)"/.exec(listed.html)![1]!);
    expect(confirm.html).toContain('Revoke the key Billing server?');
    expect((await apiRequest(server, 'sandbox', 'GET', '/v1/donations?limit=1', { bearer: key })).status).toBe(200);
    const revoked = await session.browser.submit(confirm, '/api-keys/revoke');
    expect(revoked.html).toContain(`The key Billing server (${key.slice(0, 13)}…) is revoked`);
    expect((await apiRequest(server, 'sandbox', 'GET', '/v1/donations?limit=1', { bearer: key })).status).toBe(401);
  });

  it('never lets the answer holding a new key be stored by a cache', async () => {
    const s = await createStaff(t.db);
    const session = await dashboardSession(server, 'production', s.users.owner);
    const page = await session.get(`/orgs/${s.ein}/api-keys`);
    const cookie = session.browser.cookieHeader(new URL(session.origin));
    const response = await fetch(`${session.origin}/orgs/${s.ein}/api-keys`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: session.origin },
      body: new URLSearchParams({ csrf: csrfOf(page.html), name: 'Payroll' }),
    });
    expect(response.status).toBe(303);
    const shown = await fetch(new URL(response.headers.get('location')!, session.origin), { headers: { cookie, accept: 'text/html' } });
    expect(shown.status).toBe(200);
    expect(shown.headers.get('cache-control')).toContain('no-store');
    expect(keyOf(await shown.text())).toMatch(/^alm_live_/);
  });

  it('shows a new key once, to the browser session that made it: never in a URL, a reload makes no second key', async () => {
    const s = await createStaff(t.db);
    const session = await dashboardSession(server, 'production', s.users.owner);
    const page = await session.get(`/orgs/${s.ein}/api-keys`);
    const cookie = session.browser.cookieHeader(new URL(session.origin));
    const posted = await fetch(`${session.origin}/orgs/${s.ein}/api-keys`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: session.origin },
      body: new URLSearchParams({ csrf: csrfOf(page.html), name: 'Nightly export' }),
    });
    const location = posted.headers.get('location')!;
    expect(location).toMatch(new RegExp(`^/orgs/${dashed(s.ein)}/api-keys\\?created=[A-Za-z0-9_-]{43}$`));
    // Held sealed, under a hash of the id in the URL: the key is in neither.
    const held = await t.db.selectFrom('one_time_secrets').selectAll().execute();
    const mine = held.filter((r) => r.binding.includes(s.orgId));
    expect(mine).toHaveLength(1);
    expect(mine[0]!.sealed).toMatch(/^enc:v1:/);
    expect(mine[0]!.id).not.toBe(new URL(location, session.origin).searchParams.get('created'));

    // Another browser session of the same user (and another Owner or Admin) gets nothing from the URL, and leaves it for the right one.
    const otherSession = await dashboardSession(server, 'production', s.users.owner);
    const elsewhere = await otherSession.get(location);
    expect(keyOf(elsewhere.html)).toBeUndefined();
    expect(elsewhere.html).toContain('A new key is shown only once');
    const admin = await dashboardSession(server, 'production', s.users.admin);
    expect(keyOf((await admin.get(location)).html)).toBeUndefined();

    const first = await session.get(location);
    const key = keyOf(first.html)!;
    expect(key).toMatch(/^alm_live_/);
    expect(location).not.toContain(key);
    expect(first.html).toContain('Your new key, Nightly export.');
    // The reload: the key is gone, and nothing new was made.
    const reload = await session.get(location);
    expect(keyOf(reload.html)).toBeUndefined();
    expect(reload.html).not.toContain(key);
    expect(reload.html).toContain('A new key is shown only once');
    expect(await t.db.selectFrom('api_keys').select('id').where('organization_id', '=', s.orgId).execute()).toHaveLength(1);
    expect((await t.db.selectFrom('one_time_secrets').selectAll().execute()).filter((r) => r.binding.includes(s.orgId))).toHaveLength(0);
    // A malformed id is the same notice, never an error.
    expect((await session.get(`/orgs/${s.ein}/api-keys?created=%00'`)).status).toBe(200);
  });

  it('refuses a key without a name, or with too long a one (400, the form kept), making none', async () => {
    const s = await createStaff(t.db);
    const session = await dashboardSession(server, 'production', s.users.owner);
    const page = await session.get(`/orgs/${s.ein}/api-keys`);
    const none = await session.browser.submit(page, '/api-keys', { name: '   ' });
    expect(none.status).toBe(400);
    expect(none.html).toContain('Give the key a name, such as what it is for.');
    const long = await session.browser.submit(page, '/api-keys', { name: 'x'.repeat(101) });
    expect(long.status).toBe(400);
    expect(long.html).toContain('1 to 100 characters');
    expect(await t.db.selectFrom('api_keys').select('id').where('organization_id', '=', s.orgId).execute()).toHaveLength(0);
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
      const refused = await session.browser.request(`${session.origin}/orgs/${s.ein}/api-keys/revoke`, {
        method: 'POST',
        form: { csrf: csrfOf(page.html), key: id },
      });
      expect(refused.status).toBe(404);
      expect((await session.get(`/orgs/${s.ein}/api-keys/${id}/revoke`)).status).toBe(404);
    }
    const live = await t.db
      .selectFrom('api_keys')
      .select('id')
      .where('revoked_at', 'is', null)
      .where('id', 'in', [sandboxKey.id, othersKey.id])
      .execute();
    expect(live).toHaveLength(2);
  });

  it('is for Owners and Admins only: a Member gets 403 for the page and for each form', async () => {
    const s = await createStaff(t.db);
    const key = await createApiKey(t.db, { org: s.ein, environment: 'production' });
    const session = await dashboardSession(server, 'production', s.users.member);
    expect((await session.get(`/orgs/${s.ein}/api-keys`)).status).toBe(403);
    expect((await session.get(`/orgs/${s.ein}/api-keys/${key.id}/revoke`)).status).toBe(403);
    const csrf = csrfOf((await session.get('/account')).html);
    expect((await session.browser.request(`${session.origin}/orgs/${s.ein}/api-keys`, { method: 'POST', form: { csrf } })).status).toBe(
      403,
    );
    expect(
      (await session.browser.request(`${session.origin}/orgs/${s.ein}/api-keys/revoke`, { method: 'POST', form: { csrf, key: key.id } }))
        .status,
    ).toBe(403);
    expect(await t.db.selectFrom('api_keys').select('id').where('organization_id', '=', s.orgId).execute()).toHaveLength(1);
  });
});
