import { describe, expect, it } from 'vitest';
import { createApiKey, revokeApiKey } from '../../src/api-keys/service.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });

type Session = Awaited<ReturnType<typeof dashboardSession>>;
const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;

/** A request as the session's browser makes it, with the answer's headers (the request id) kept. */
async function answer(session: Session, path: string, init: { method?: string; form?: Record<string, string>; accept?: string } = {}) {
  const url = new URL(`${session.origin}${path}`);
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    redirect: 'manual',
    headers: {
      cookie: session.browser.cookieHeader(url),
      accept: init.accept ?? 'text/html',
      ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded', origin: session.origin } : {}),
    },
    body: init.form ? new URLSearchParams(init.form) : undefined,
  });
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    requestId: response.headers.get('x-request-id') ?? '',
    html: await response.text(),
  };
}

/** What makes a page one of the dashboard's: its navigation and who is signed in, with Sign out. */
function expectDashboardFrame(html: string, email: string) {
  expect(html).toContain('<nav class="topnav" aria-label="Dashboard">');
  expect(html).toContain(`Signed in as <strong>${email}</strong>`);
  expect(html).toMatch(
    /<form method="post" action="\/oauth\/logout" class="who">\s*<span>[^<]*<strong>[^<]+<\/strong><\/span>\s*<input type="hidden" name="csrf" value="[^"]+">/,
  );
}

describe('error pages inside the dashboard', () => {
  it('shows a signed-in user another organization’s page as a 404 inside the dashboard, with its title, message and request id', async () => {
    const s = await createStaff(t.db);
    const other = await createStaff(t.db);
    const session = await dashboardSession(server, 'production', s.users.owner);
    const page = await answer(session, `/orgs/${other.ein}/members`);
    expect(page.status).toBe(404);
    expectDashboardFrame(page.html, s.users.owner.email);
    expect(page.html).toContain('<h1>Page not found</h1>');
    expect(page.html).toContain('There is no such organization among yours.');
    expect(page.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(page.html).toContain(`<code>${page.requestId}</code>`);
    // Nothing of the other organization: no header, no name.
    expect(page.html).not.toContain('class="org-head"');
    expect(page.html).not.toContain(other.users.owner.email);
    // The viewer's own organization is in the navigation, as on every page.
    expect(page.html).toContain(`href="/orgs/${s.ein.slice(0, 2)}-${s.ein.slice(2)}/members"`);
  });

  it('shows a Member refused an organization’s page the organization’s header without its tabs, and the 403’s words', async () => {
    const s = await createStaff(t.db);
    const session = await dashboardSession(server, 'production', s.users.member);
    const page = await answer(session, `/orgs/${s.ein}/api-keys`);
    expect(page.status).toBe(403);
    expectDashboardFrame(page.html, s.users.member.email);
    expect(page.html).toContain('class="org-head"');
    expect(page.html).toContain('your role: Member');
    expect(page.html).not.toContain('<nav class="tabs"');
    expect(page.html).toContain('<h1>Only Owners and Admins manage the organization</h1>');
    expect(page.html).toContain('does not allow this. Ask an Owner or Admin');
    // The page's one h1 is the error's title: the organization's name is its context.
    expect(page.html.match(/<h1[ >]/g)).toHaveLength(1);
    expect(page.html).toContain(`<code>${page.requestId}</code>`);
  });

  it('frames a forbidden form post (an Admin making an Owner) with the organization’s header and tabs', async () => {
    const s = await createStaff(t.db);
    const session = await dashboardSession(server, 'production', s.users.admin);
    const csrf = csrfOf((await session.get(`/orgs/${s.ein}/members`)).html);
    const page = await answer(session, `/orgs/${s.ein}/members/role`, {
      method: 'POST',
      form: { csrf, user: s.users.member.id, role: 'owner' },
    });
    expect(page.status).toBe(403);
    expectDashboardFrame(page.html, s.users.admin.email);
    expect(page.html).toContain('<nav class="tabs"');
    expect(page.html).toContain('<h1>You cannot make this change</h1>');
    expect(page.html).toContain('(Admin) does not allow it');
    expect(
      (await t.db.selectFrom('memberships').select('role').where('user_id', '=', s.users.member.id).executeTakeFirstOrThrow()).role,
    ).toBe('member');
  });

  it('frames a 409 (a key revoked already) and a page of the organization that does not exist', async () => {
    const s = await createStaff(t.db);
    const key = await createApiKey(t.db, { org: s.ein, environment: 'production' });
    await revokeApiKey(t.db, key.id);
    const session = await dashboardSession(server, 'production', s.users.owner);
    const csrf = csrfOf((await session.get(`/orgs/${s.ein}/api-keys`)).html);
    const conflict = await answer(session, `/orgs/${s.ein}/api-keys/revoke`, { method: 'POST', form: { csrf, key: key.id } });
    expect(conflict.status).toBe(409);
    expectDashboardFrame(conflict.html, s.users.owner.email);
    expect(conflict.html).toContain(`API key ${key.id} is already revoked`);
    const missing = await answer(session, `/orgs/${s.ein}/no-such-tab`);
    expect(missing.status).toBe(404);
    expectDashboardFrame(missing.html, s.users.owner.email);
    expect(missing.html).toContain('<h1>Page not found</h1>');
  });

  it('keeps the plain page for signed-out visitors, the authorization flow and programs', async () => {
    const s = await createStaff(t.db);
    const signedOut = await fetch(`${server.urls.dashboard}/orgs/${s.ein}/no-such-tab`, { headers: { accept: 'text/html' } });
    expect(signedOut.status).toBe(404);
    const plain = await signedOut.text();
    expect(plain).toContain('<h1>Page not found</h1>');
    expect(plain).not.toContain('Signed in as');
    const session = await dashboardSession(server, 'production', s.users.owner);
    // The flow's pages never read the dashboard's viewer: an expired sign-in is the flow's own page.
    const flow = await answer(session, '/oauth/interaction/not-an-interaction');
    expect(flow.status).toBeGreaterThanOrEqual(400);
    expect(flow.html).not.toContain('Signed in as');
    expect(flow.html).not.toContain('class="topnav"');
    const program = await answer(session, `/orgs/${s.ein}/api-keys`, { accept: 'application/json' });
    expect(program.status).toBe(200);
    const member = await dashboardSession(server, 'production', s.users.member);
    const refused = await answer(member, `/orgs/${s.ein}/api-keys`, { accept: 'application/json' });
    expect(refused.status).toBe(403);
    expect(refused.type).toContain('application/problem+json');
    expect(JSON.parse(refused.html)).toMatchObject({ status: 403, title: 'Only Owners and Admins manage the organization' });
  });
});
