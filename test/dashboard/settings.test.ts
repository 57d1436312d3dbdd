import { describe, expect, it } from 'vitest';
import { dashboardSession, enrolAuthenticator } from '../helpers/dashboard.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;
const requireMfa = async (orgId: string) =>
  (await t.db.selectFrom('organizations').select('require_mfa').where('id', '=', orgId).executeTakeFirstOrThrow()).require_mfa;

describe("an organization's settings", () => {
  it('refuses to require a second factor of everyone from an Owner who signed in without one', async () => {
    const s = await createStaff(t.db);
    const session = await dashboardSession(server, 'production', s.users.owner);
    const page = await session.get(`/orgs/${s.ein}/settings`);
    expect(page.html).toContain('Not required');
    expect(page.html).toContain('Members without one</dt><dd>4');
    // The way to a second factor is the Security page, where one is set up.
    expect(page.html).toContain('<a href="/account/security">set one up under Security</a>');
    const refused = await session.browser.submit(page, '/settings', { require_mfa: 'on' });
    expect(refused.status).toBe(412);
    expect(refused.html).toContain('Sign in with a second factor yourself before requiring one of everyone');
    expect(await requireMfa(s.orgId)).toBe(false);
  });

  it('turns the requirement off for an Owner, and records who did', async () => {
    const s = await createStaff(t.db);
    await t.db.updateTable('organizations').set({ require_mfa: true }).where('id', '=', s.orgId).execute();
    const session = await dashboardSession(server, 'production', s.users.owner);
    await enrolAuthenticator(session, s.users.owner.email);
    const saved = await session.browser.submit(await session.get(`/orgs/${s.ein}/settings`), '/settings');
    expect(saved.html).toContain('A second factor is no longer required of every member.');
    expect(await requireMfa(s.orgId)).toBe(false);
    const audit = await t.db
      .selectFrom('audit_events')
      .selectAll()
      .where('event', '=', 'organization.settings_changed')
      .where('organization_id', '=', s.orgId)
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ actor_user_id: s.users.owner.id, details: { require_mfa: false } });
  });

  it('shows an Admin the setting but not the form, and answers an Admin’s or a Member’s post 403', async () => {
    const s = await createStaff(t.db);
    await t.db.updateTable('organizations').set({ require_mfa: true }).where('id', '=', s.orgId).execute();
    const admin = await dashboardSession(server, 'production', s.users.admin);
    await enrolAuthenticator(admin, s.users.admin.email);
    const page = await admin.get(`/orgs/${s.ein}/settings`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Only an Owner of');
    expect(page.html).not.toContain('name="require_mfa"');
    const adminPost = await admin.browser.request(`${admin.origin}/orgs/${s.ein}/settings`, {
      method: 'POST',
      form: { csrf: csrfOf(page.html) },
    });
    expect(adminPost.status).toBe(403);
    const member = await dashboardSession(server, 'production', s.users.member);
    expect((await member.get(`/orgs/${s.ein}/settings`)).status).toBe(403);
    const memberPost = await member.browser.request(`${member.origin}/orgs/${s.ein}/settings`, {
      method: 'POST',
      form: { csrf: csrfOf((await member.get('/account')).html) },
    });
    expect(memberPost.status).toBe(403);
    expect(await requireMfa(s.orgId)).toBe(true);
  });

  it('lets an Owner signed in with a second factor require one of everyone; then a member without one gets 403 on the organization pages', async () => {
    const s = await createStaff(t.db);
    const owner = await dashboardSession(server, 'production', s.users.owner);
    await enrolAuthenticator(owner, s.users.owner.email);
    const saved = await owner.browser.submit(await owner.get(`/orgs/${s.ein}/settings`), '/settings', { require_mfa: 'on' });
    expect(saved.status).toBe(200);
    expect(await requireMfa(s.orgId)).toBe(true);
    const admin = await dashboardSession(server, 'production', s.users.admin);
    const refused = await admin.get(`/orgs/${s.ein}/members`);
    expect(refused.status).toBe(403);
    expect(refused.html).toContain('requires a second factor');
    await enrolAuthenticator(admin, s.users.admin.email);
    expect((await admin.get(`/orgs/${s.ein}/members`)).status).toBe(200);
  });
});
