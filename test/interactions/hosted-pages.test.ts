import { describe, expect, it } from 'vitest';
import { addMember } from '../../src/accounts/memberships.js';
import { revokeAuthorization } from '../../src/authorizations/authorizations.js';
import { FormBrowser } from '../helpers/browser.js';
import { authorize, endpoints } from '../helpers/flow.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const REDIRECT = 'https://app.example.org/callback';
const {
  testDatabase: t,
  server,
  staff,
  clients: { client },
} = useOAuthServer({
  // Stronger than the parameters createStaff hashes with, so every first sign-in upgrades.
  config: { password_time_cost: 3 },
  clients: { client: { environment: 'production', redirectUris: [REDIRECT] } },
});

const browser = () => new FormBrowser((url) => url.origin === 'https://app.example.org');
const flow = (options: Partial<Parameters<typeof authorize>[1]> & { login?: { email: string; password: string } }) =>
  authorize(server, { environment: 'production', clientId: client.client_id, redirectUri: REDIRECT, scope: 'read_only', ...options });
const hashOf = async (id: string) =>
  (await t.db.selectFrom('users').select('password_hash').where('id', '=', id).executeTakeFirstOrThrow()).password_hash;

describe('sign-in', () => {
  it('upgrades a password hash made with older parameters after a successful sign-in only', async () => {
    const s = await createStaff(t.db);
    const before = await hashOf(s.users.member.id);
    expect(before).toContain('t=2');
    await expect(flow({ login: { email: s.users.member.email, password: 'wrong password' } })).rejects.toThrow(/sign-in refused \(401\)/);
    expect(await hashOf(s.users.member.id)).toBe(before);
    const result = await flow({ login: s.users.member });
    expect(result.callback.searchParams.get('code')).toBeTruthy();
    const after = await hashOf(s.users.member.id);
    expect(after).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=3\$/);
    // The upgraded hash still verifies the same password.
    expect((await flow({ login: s.users.member })).callback.searchParams.get('code')).toBeTruthy();
  });

  it('answers a disabled account, an over-long password and a malformed address like a wrong password', async () => {
    const s = await createStaff(t.db);
    await t.db.updateTable('users').set({ disabled_at: new Date() }).where('id', '=', s.users.member.id).execute();
    for (const login of [
      s.users.member,
      { email: s.users.owner.email, password: 'x'.repeat(5000) },
      { email: 'not an address', password: 'whatever1' },
    ]) {
      await expect(flow({ login })).rejects.toThrow(/sign-in refused \(401\)/);
    }
  });

  it('signs a different user in when prompt=login is answered by someone else, ending the old session', async () => {
    const s = await createStaff(t.db);
    const shared = browser();
    await flow({ login: s.users.owner, browser: shared });
    const sessions = async () =>
      (await t.db.selectFrom('oidc_models').select('payload').where('model', '=', 'Session').execute()).map(
        (r) => (r.payload as { accountId?: string }).accountId,
      );
    expect(await sessions()).toContain(s.users.owner.id);
    const result = await flow({ login: s.users.admin, browser: shared, extraParams: { prompt: 'login' } });
    expect(result.callback.searchParams.get('code')).toBeTruthy();
    const row = await t.db.selectFrom('oauth_authorizations').select('user_id').orderBy('created_at', 'desc').executeTakeFirstOrThrow();
    expect(row.user_id).toBe(s.users.admin.id);
    expect(await sessions()).not.toContain(s.users.owner.id);
  });
});

describe('consent reuse', () => {
  it('after the nonprofit choice, answers a request a live authorization for that nonprofit covers without asking', async () => {
    const [a, b] = await Promise.all([createStaff(t.db), createStaff(t.db)]);
    await addMember(t.db, { org: b.ein, email: a.users.member.email, role: 'member' });
    const shared = browser();
    const first = await flow({ login: a.users.member, organizationId: a.orgId, browser: shared });
    expect(first.consentHtml).toContain('Approve');
    const again = await flow({ organizationId: a.orgId, browser: shared });
    expect(again.consentHtml).toBe('');
    expect(again.callback.searchParams.get('code')).toBeTruthy();
    const other = await flow({ organizationId: b.orgId, browser: shared });
    expect(other.consentHtml).toContain('Approve');
  });

  it('asks again once the covering authorization is revoked', async () => {
    const s = await createStaff(t.db);
    const shared = browser();
    await flow({ login: s.users.owner, browser: shared });
    const grant = await t.db
      .selectFrom('oauth_authorizations')
      .select('grant_id')
      .where('user_id', '=', s.users.owner.id)
      .executeTakeFirstOrThrow();
    expect((await flow({ browser: shared })).consentHtml).toBe('');
    await revokeAuthorization(t.db, 'production', grant.grant_id, 'test');
    expect((await flow({ browser: shared })).consentHtml).toContain('Approve');
  });

  it('refuses a nonprofit the user does not belong to on the choice page', async () => {
    const [a, b, c] = await Promise.all([createStaff(t.db), createStaff(t.db), createStaff(t.db)]);
    await addMember(t.db, { org: b.ein, email: a.users.member.email, role: 'member' });
    const shared = browser();
    await expect(flow({ login: a.users.member, browser: shared })).rejects.toThrow(/organization choice shown/);
    const choice = await shared.request(
      `${endpoints(server, 'production').dashboard}/oauth/authorize?${new URLSearchParams({ client_id: client.client_id, redirect_uri: REDIRECT, response_type: 'code', scope: 'read_only', nonce: 'n', code_challenge: 'a'.repeat(43), code_challenge_method: 'S256' })}`,
    );
    expect(choice.html).toContain('Choose a nonprofit');
    const foreign = await shared.request(`${choice.url.origin}${choice.url.pathname}?org=${c.orgId}`);
    expect(foreign.status).toBe(400);
    expect(foreign.html).toContain('That nonprofit is not one of yours.');
  });
});

describe('pages and problems', () => {
  const dashboard = () => endpoints(server, 'production').dashboard;

  it('renders an expired interaction as a page for browsers and a problem for API clients', async () => {
    const html = await fetch(`${dashboard()}/oauth/interaction/nothing-here`, {
      headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
    });
    expect(html.status).toBe(400);
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    const body = await html.text();
    expect(body).toContain('This sign-in has expired');
    expect(body).toContain(html.headers.get('x-request-id'));
    expect(html.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");

    const json = await fetch(`${dashboard()}/oauth/interaction/nothing-here`, { headers: { accept: 'application/json' } });
    expect(json.status).toBe(400);
    expect(json.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await json.json()).toMatchObject({ status: 400 });
  });

  it('sets a Strict, HttpOnly nonce cookie for signing in on the connections page, and needs it', async () => {
    const page = await fetch(`${dashboard()}/oauth/connections`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    const cookie = page.headers.getSetCookie().find((c) => c.startsWith('alm_production_signin='))!;
    expect(cookie.split('; ').map((part) => part.toLowerCase())).toEqual(expect.arrayContaining(['path=/', 'samesite=strict', 'httponly']));
    const token = /name="csrf" value="([^"]+)"/.exec(await page.text())![1]!;
    const withoutCookie = await fetch(`${dashboard()}/oauth/connections/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      body: new URLSearchParams({ csrf: token, email: staff.users.owner.email, password: staff.users.owner.password }),
    });
    expect(withoutCookie.status).toBe(403);
    expect(await withoutCookie.text()).toContain('We could not accept this form');
  });

  it('sends revoke and sign-out without a session back to a sign-in, changing nothing', async () => {
    const expected = { '/oauth/connections/revoke': /^\/oauth\/connections$/, '/oauth/logout': /^\/sign-in\?signed_out=1$/ };
    for (const [path, location] of Object.entries(expected)) {
      const response = await fetch(`${dashboard()}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant=x&csrf=y',
      });
      expect(response.status).toBe(303);
      expect(response.headers.get('location')).toMatch(location);
    }
  });

  it('records consent denied with the application and the user', async () => {
    const s = await createStaff(t.db);
    const result = await flow({ login: s.users.member, decision: 'deny' });
    expect(result.callback.searchParams.get('error')).toBe('access_denied');
    const denied = await t.db
      .selectFrom('audit_events')
      .selectAll()
      .where('event', '=', 'consent.denied')
      .where('actor_user_id', '=', s.users.member.id)
      .executeTakeFirstOrThrow();
    expect(denied).toMatchObject({ client_id: client.client_id, environment: 'production' });
  });
});
