import { describe, expect, it } from 'vitest';
import { safeReturnPath } from '../../src/dashboard/paths.js';
import { FormBrowser } from '../helpers/browser.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const { testDatabase: t, server, staff } = useOAuthServer();
/** The EIN as the pages write it (12-3456789); createStaff's is the nine digits. */
const dashed = (ein: string) => `${ein.slice(0, 2)}-${ein.slice(2)}`;

describe('the dashboard: sign-in, account, organization pages', () => {
  it('sends a browser without a session to the sign-in page, and back to the page it asked for', async () => {
    const browser = new FormBrowser(() => false);
    const page = await browser.request(`${server.urls.dashboard}/orgs/${staff.ein}/members`);
    expect(page.url.pathname).toBe('/sign-in');
    expect(page.url.searchParams.get('next')).toBe(`/orgs/${staff.ein}/members`);
    const landed = await browser.submit(page, '/sign-in', { email: staff.users.owner.email, password: staff.users.owner.password });
    expect(landed.status).toBe(200);
    expect(landed.url.pathname).toBe(`/orgs/${staff.ein}/members`);
    expect(landed.html).toContain(staff.users.member.email);
  });

  it('shows every member their account and organizations; only Owners and Admins get a Manage link', async () => {
    for (const role of ['owner', 'admin', 'member', 'read_only'] as const) {
      const session = await dashboardSession(server, 'production', staff.users[role]);
      const account = await session.get('/account');
      expect(account.status).toBe(200);
      expect(account.html).toContain('<h1>Your account</h1>');
      expect(account.html).toContain(staff.users[role].email);
      expect(account.html.includes(`href="/orgs/${dashed(staff.ein)}/members"`)).toBe(role === 'owner' || role === 'admin');
    }
  });

  it('lets Owners and Admins see the members page; a Member or Read-only user gets 403, another organization 404', async () => {
    const other = await createStaff(t.db);
    for (const role of ['owner', 'admin'] as const) {
      const session = await dashboardSession(server, 'sandbox', staff.users[role]);
      const members = await session.get(`/orgs/${staff.ein}/members`);
      expect(members.status).toBe(200);
      for (const r of ['owner', 'admin', 'member', 'read_only'] as const) expect(members.html).toContain(staff.users[r].email);
      // Dashed or not, the EIN names the same organization; another organization does not exist for them.
      expect((await session.get(`/orgs/${dashed(staff.ein)}/members`)).status).toBe(200);
      expect((await session.get(`/orgs/${other.ein}/members`)).status).toBe(404);
      expect((await session.get('/orgs/00-0000000/members')).status).toBe(404);
    }
    for (const role of ['member', 'read_only'] as const) {
      const session = await dashboardSession(server, 'production', staff.users[role]);
      const refused = await session.get(`/orgs/${staff.ein}/members`);
      expect(refused.status).toBe(403);
      expect(refused.html).toContain('Only Owners and Admins manage the organization');
      expect(refused.html).not.toContain(staff.users.owner.email);
    }
  });

  it('keeps sign-in inside the dashboard: a next that leaves the host falls back to the account page', () => {
    expect(safeReturnPath('/orgs/12-3456789/members')).toBe('/orgs/12-3456789/members');
    expect(safeReturnPath('/oauth/connections')).toBe('/oauth/connections');
    expect(safeReturnPath('/invitations/abc')).toBe('/invitations/abc');
    for (const bad of [
      '//evil.example/account',
      '/\\evil.example',
      'https://evil.example/account',
      '/accountx',
      '/oauth/authorize?x=1',
      '/account\n',
      undefined,
      42,
      `/account/${'x'.repeat(600)}`,
    ]) {
      expect(safeReturnPath(bad)).toBe('/account');
    }
  });

  it('answers the dashboard root with the account page for browsers and a description for programs', async () => {
    const browser = await fetch(`${server.urls.dashboard}/`, { redirect: 'manual', headers: { accept: 'text/html' } });
    expect(browser.status).toBe(303);
    expect(browser.headers.get('location')).toBe('/account');
    const program = await fetch(`${server.urls.dashboard}/`, { headers: { accept: 'application/json' } });
    expect(await program.json()).toMatchObject({ surface: 'dashboard', environment: 'production' });
  });
});
