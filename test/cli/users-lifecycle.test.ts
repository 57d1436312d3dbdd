import { describe, expect, it } from 'vitest';
import { runAdmin } from '../helpers/admin-cli.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { introspect, obtainTokens, tokenRequest, type Env } from '../helpers/flow.js';
import { apiGet } from '../helpers/gateway.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * The maker's account commands through the real admin CLI against a running server's
 * database (docs/operations.md, "Admin CLI"): users list, disable and enable (sessions and
 * tokens end), reset-password, orgs remove (refused while data exists, --force deletes it and
 * its access), audit list with its filters.
 */
type Client = { client_id: string; client_secret: string };
const REDIRECT = 'https://app.example.org/callback';
const SANDBOX_REDIRECT = 'http://127.0.0.1:9999/callback';
const {
  testDatabase: t,
  server,
  clients: { production, sandbox, orgClient },
} = useOAuthServer({
  staff: 0,
  clients: {
    production: { environment: 'production', redirectUris: [REDIRECT] },
    sandbox: { environment: 'sandbox', redirectUris: [SANDBOX_REDIRECT] },
    orgClient: { environment: 'production', redirectUris: [REDIRECT], scopes: ['read_only', 'read_write'], subjectType: 'organization' },
  },
});

async function admin(argv: string[], stdin = '') {
  const { code, stdout, stderr } = await runAdmin([...argv, '--json'], { DATABASE_URL: t.url }, stdin);
  return { code, stderr, json: (stdout ? JSON.parse(stdout) : {}) as Record<string, unknown> };
}

async function approve(staff: Staff, who: 'admin' | 'member' | 'owner', environment: Env, client: Client, scope: string) {
  const result = await obtainTokens(server, {
    environment,
    client,
    clientId: client.client_id,
    redirectUri: environment === 'sandbox' ? SANDBOX_REDIRECT : REDIRECT,
    scope,
    login: staff.users[who],
  });
  expect(result.tokens.status).toBe(200);
  return { access: result.tokens.body.access_token as string, refresh: result.tokens.body.refresh_token as string };
}

const gateway = (environment: Env, bearer: string) => apiGet(server, environment, '/v1/donations', { bearer });

describe('admin users', () => {
  it('list shows each user with status, creation and organizations count', async () => {
    const s = await createStaff(t.db);
    await t.db.updateTable('users').set({ disabled_at: new Date() }).where('id', '=', s.users.read_only.id).execute();
    const listed = await admin(['users', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    const users = listed.json.users as { email: string; status: string; organizations: number; created_at: string }[];
    expect(users.find((u) => u.email === s.users.owner.email)).toMatchObject({ status: 'active', organizations: 1 });
    expect(users.find((u) => u.email === s.users.read_only.email)).toMatchObject({ status: 'disabled', organizations: 1 });
    expect(Number.isNaN(Date.parse(users[0]!.created_at))).toBe(false);
    const text = await runAdmin(['users', 'list'], { DATABASE_URL: t.url });
    expect(text.stdout).toMatch(new RegExp(`${s.users.read_only.email.replace('.', '\\.')}  disabled`));
  });

  it('disable ends sessions and user-subject access in both environments and refuses sign-in; enable restores sign-in only', async () => {
    const s = await createStaff(t.db);
    const prod = await approve(s, 'admin', 'production', production, 'openid read_only');
    const sand = await approve(s, 'admin', 'sandbox', sandbox, 'read_only');
    const org = await approve(s, 'admin', 'production', orgClient, 'read_only');
    const session = await dashboardSession(server, 'production', s.users.admin);
    expect((await gateway('production', prod.access)).status).toBe(200);

    const disabled = await admin(['users', 'disable', '--email', s.users.admin.email.toUpperCase()]);
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(disabled.json).toMatchObject({ email: s.users.admin.email, revoked_authorizations: 2 });
    expect(disabled.json.sessions_ended as number).toBeGreaterThanOrEqual(1);
    expect((await session.get('/account')).url.pathname).toBe('/sign-in');
    expect((await gateway('production', prod.access)).status).toBe(401);
    expect((await gateway('sandbox', sand.access)).status).toBe(401);
    expect((await introspect(server, 'production', production, prod.access)).body.active).toBe(false);
    const refreshed = await tokenRequest(server, 'production', production, { grant_type: 'refresh_token', refresh_token: prod.refresh });
    expect([refreshed.status, refreshed.body.error]).toEqual([401, 'invalid_grant']);
    // The organization's own access is the organization's.
    expect((await introspect(server, 'production', orgClient, org.access)).body.active).toBe(true);
    await expect(dashboardSession(server, 'production', s.users.admin)).rejects.toThrow(/401/);
    expect((await admin(['users', 'disable', '--email', s.users.admin.email])).code).toBe(1);
    const audit = await t.db
      .selectFrom('audit_events')
      .select(['event', 'details'])
      .where('event', 'in', ['user.disabled', 'authorization.revoked'])
      .where(({ eb, ref }) => eb(ref('details', '->>').key('user_id'), '=', s.users.admin.id))
      .execute();
    expect(audit.filter((a) => a.event === 'user.disabled')).toHaveLength(1);
    expect(audit.filter((a) => a.event === 'authorization.revoked' && a.details.reason === 'user_disabled')).toHaveLength(2);

    const enabled = await admin(['users', 'enable', '--email', s.users.admin.email]);
    expect(enabled.code, enabled.stderr).toBe(0);
    await dashboardSession(server, 'production', s.users.admin);
    // What disabling revoked stays revoked.
    expect((await gateway('production', prod.access)).status).toBe(401);
    expect((await admin(['users', 'enable', '--email', s.users.admin.email])).code).toBe(1);
  });

  it('reset-password sets a policy-checked password from stdin, ends every session, audits without an actor and notifies', async () => {
    const s = await createStaff(t.db);
    const session = await dashboardSession(server, 'sandbox', s.users.admin);
    const common = await admin(['users', 'reset-password', '--email', s.users.admin.email, '--password-stdin'], 'password1234\n');
    expect(common.code).toBe(2);
    expect(common.stderr).toMatch(/common passwords/);
    const missing = await admin(
      ['users', 'reset-password', '--email', 'nobody@example.org', '--password-stdin'],
      'a fine new passphrase\n',
    );
    expect(missing.code).toBe(1);

    const reset = await admin(['users', 'reset-password', '--email', s.users.admin.email, '--password-stdin'], 'a fine new passphrase\n');
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.json).toMatchObject({ email: s.users.admin.email, sessions_ended: 1, notified: true });
    expect((await session.get('/account')).url.pathname).toBe('/sign-in');
    await dashboardSession(server, 'production', { email: s.users.admin.email, password: 'a fine new passphrase' });
    const audit = await t.db
      .selectFrom('audit_events')
      .selectAll()
      .where('event', '=', 'user.password_reset')
      .where(({ eb, ref }) => eb(ref('details', '->>').key('user_id'), '=', s.users.admin.id))
      .executeTakeFirstOrThrow();
    expect(audit.actor_user_id).toBeNull();
    expect(audit.details).toMatchObject({ via: 'cli' });
    const notice = await t.db
      .selectFrom('outbound_mail')
      .select('body')
      .where('recipient', '=', s.users.admin.email)
      .where('subject', '=', 'Your Almoner password was changed')
      .executeTakeFirstOrThrow();
    expect(notice.body).toContain('set by an administrator');
  });
});

describe('admin orgs remove', () => {
  it('refuses while the organization holds data, naming it; --force deletes it all and ends its access', async () => {
    const s = await createStaff(t.db);
    const user = await approve(s, 'owner', 'production', production, 'read_only');
    const org = await approve(s, 'owner', 'production', orgClient, 'read_only');
    const key = await admin(['api-keys', 'create', '--org', s.ein, '--environment', 'sandbox']);
    expect(key.code, key.stderr).toBe(0);
    const seeded = await admin([
      'demo',
      'seed',
      '--org',
      s.ein,
      '--environment',
      'sandbox',
      '--donations',
      '2',
      '--connects',
      '1',
      '--grants',
      '1',
      '--accounts',
      '1',
      '--transactions',
      '2',
    ]);
    expect(seeded.code, seeded.stderr).toBe(0);

    const refused = await admin(['orgs', 'remove', '--ein', s.ein]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^almoner admin: error \(conflict\): Nonprofit \w+ \(\d\d-\d{7}\) still has 4 members, 2 authorizations, 1 api keys, 1 connects, 2 donations, 1 grants, 1 deposit accounts.*pass --force/,
    );
    expect(await t.db.selectFrom('organizations').select('id').where('id', '=', s.orgId).execute()).toHaveLength(1);
    expect((await gateway('production', user.access)).status).toBe(200);
    expect((await apiGet(server, 'sandbox', '/v1/donations', { bearer: key.json.key as string })).status).toBe(200);

    const removed = await admin(['orgs', 'remove', '--ein', s.ein, '--force']);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.json).toMatchObject({ revoked_authorizations: 2, removed: { members: 4, 'api keys': 1, donations: 2 } });
    expect(await t.db.selectFrom('organizations').select('id').where('id', '=', s.orgId).execute()).toEqual([]);
    expect(await t.db.selectFrom('memberships').select('user_id').where('organization_id', '=', s.orgId).execute()).toEqual([]);
    expect((await gateway('production', user.access)).status).toBe(401);
    expect((await introspect(server, 'production', orgClient, org.access)).body.active).toBe(false);
    expect((await apiGet(server, 'sandbox', '/v1/donations', { bearer: key.json.key as string })).status).toBe(401);
    const audit = await t.db
      .selectFrom('audit_events')
      .selectAll()
      .where('event', '=', 'organization.removed')
      .where('organization_id', '=', s.orgId)
      .executeTakeFirstOrThrow();
    expect(audit.details).toMatchObject({ forced: true, revoked_authorizations: 2 });
    // The users stay; they just belong to nothing now.
    expect(await t.db.selectFrom('users').select('id').where('id', '=', s.users.owner.id).execute()).toHaveLength(1);
  });

  it('removes an organization that holds nothing without --force, and says so for an unknown EIN', async () => {
    const added = await admin(['orgs', 'add', '--ein', '55-5000001', '--name', 'Empty Org']);
    expect(added.code, added.stderr).toBe(0);
    expect((await admin(['orgs', 'remove', '--ein', '55-5000001'])).code).toBe(0);
    const again = await admin(['orgs', 'remove', '--ein', '55-5000001']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/no organization with EIN 55-5000001/);
  });

  it("refuses to remove a grantmaker, even with --force: its financial accounts' ledger records are kept", async () => {
    expect((await admin(['orgs', 'add', '--ein', '55-5000002', '--name', 'Kept Foundation', '--kind', 'grantmaker'])).code).toBe(0);
    const refused = await admin(['orgs', 'remove', '--ein', '55-5000002', '--force']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /error \(conflict\): Kept Foundation \(55-5000002\) has 2 financial accounts, whose ledger records are kept: it cannot be removed, even with --force/,
    );
    expect(await t.db.selectFrom('organizations').select('id').where('ein', '=', '555000002').execute()).toHaveLength(1);
  });
});

describe('admin audit list', () => {
  it('lists events newest first, filtered by organization, actor, event, time and limit', async () => {
    const s = await createStaff(t.db);
    const session = await dashboardSession(server, 'production', s.users.owner);
    const page = await session.get(`/orgs/${s.ein}/members`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)![1]!;
    await session.browser.request(`${session.origin}/orgs/${s.ein}/members/role`, {
      method: 'POST',
      form: { csrf, user: s.users.member.id, role: 'admin' },
    });

    const all = await admin(['audit', 'list', '--org', s.ein, '--limit', '100']);
    expect(all.code, all.stderr).toBe(0);
    const events = all.json.events as { id: string; event: string; actor_email: string | null; occurred_at: string }[];
    expect(events.map((e) => e.event)).toEqual(
      expect.arrayContaining(['membership.added', 'membership.role_changed', 'organization.created']),
    );
    expect(events.map((e) => Number(e.id))).toEqual([...events.map((e) => Number(e.id))].sort((a, b) => b - a));

    const byActor = await admin(['audit', 'list', '--org', s.ein, '--actor', s.users.owner.email]);
    expect((byActor.json.events as { event: string; actor_email: string }[]).map((e) => [e.event, e.actor_email])).toEqual([
      ['membership.role_changed', s.users.owner.email],
    ]);
    const byEvent = await admin(['audit', 'list', '--org', s.ein, '--event', 'membership.added']);
    expect((byEvent.json.events as unknown[]).length).toBe(4);
    const limited = await admin(['audit', 'list', '--org', s.ein, '--limit', '2']);
    expect((limited.json.events as unknown[]).length).toBe(2);
    const future = await admin(['audit', 'list', '--org', s.ein, '--since', '2999-01-01']);
    expect(future.json.events).toEqual([]);
    const past = await admin(['audit', 'list', '--org', s.ein, '--until', '2000-01-01T00:00:00Z']);
    expect(past.json.events).toEqual([]);
    const window = await admin([
      'audit',
      'list',
      '--org',
      s.ein,
      '--since',
      new Date(Date.now() - 3600_000).toISOString(),
      '--until',
      new Date(Date.now() + 3600_000).toISOString(),
    ]);
    expect((window.json.events as unknown[]).length).toBe(events.length);
    const unknownActor = await admin(['audit', 'list', '--actor', 'nobody@example.org']);
    expect(unknownActor.code).toBe(1);
  });
});
