import { describe, expect, it } from 'vitest';
import { browserName } from '../../src/dashboard/sessions-section.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { obtainTokens, tokenRequest } from '../helpers/flow.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Where you are signed in (docs/accounts.md, "Sessions"): the Security page lists every
 * browser session of the user on both dashboards (where, when, how), with Sign out for each
 * and Sign out everywhere.
 */
const REDIRECT = 'https://app.example.org/callback';
const {
  testDatabase: t,
  server,
  clients: { app },
} = useOAuthServer({ staff: 0, clients: { app: { environment: 'production', redirectUris: [REDIRECT] } } });
const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;
const sessionIds = (html: string) => [...html.matchAll(/name="session" value="([^"]+)"/g)].map((m) => m[1]!);

describe('the signed-in browsers on the Security page', () => {
  it('lists the sessions of both dashboards and of the authorization flow, this one first and marked', async () => {
    const s = await createStaff(t.db);
    const user = s.users.member;
    const here = await dashboardSession(server, 'production', user);
    await dashboardSession(server, 'sandbox', user);
    await obtainTokens(server, {
      environment: 'production',
      client: app,
      clientId: app.client_id,
      redirectUri: REDIRECT,
      scope: 'openid read_only',
      login: user,
    });
    const page = await here.get('/account/security');
    expect(page.html).toContain('Where you are signed in');
    expect(sessionIds(page.html)).toHaveLength(3);
    expect(page.html).toContain('Sandbox dashboard');
    expect(page.html).toContain('Production dashboard');
    expect(page.html).toMatch(/this browser<\/span>/);
    expect(page.html).toContain('127.0.0.1');
    expect(page.html).toContain('With password');
    // Another user's sessions are not listed.
    await dashboardSession(server, 'production', s.users.admin);
    expect(sessionIds((await here.get('/account/security')).html)).toHaveLength(3);
  });

  it('signs one browser out (another user’s session is 404), and this one out with the same button', async () => {
    const s = await createStaff(t.db);
    const user = s.users.admin;
    const here = await dashboardSession(server, 'production', user);
    const there = await dashboardSession(server, 'sandbox', user);
    const stranger = await dashboardSession(server, 'production', s.users.owner);
    const page = await here.get('/account/security');
    const strangerId = sessionIds((await stranger.get('/account/security')).html)[0]!;
    const foreign = await here.browser.request(`${here.origin}/account/security/sessions/sign-out`, {
      method: 'POST',
      form: { csrf: csrfOf(page.html), session: strangerId },
    });
    expect(foreign.status).toBe(404);
    expect((await stranger.get('/account')).url.pathname).toBe('/account');

    const thereId = sessionIds((await there.get('/account/security')).html)[0]!;
    const done = await here.browser.request(`${here.origin}/account/security/sessions/sign-out`, {
      method: 'POST',
      form: { csrf: csrfOf(page.html), session: thereId },
    });
    expect(done.url.pathname).toBe('/account/security');
    expect(done.html).toContain('That browser is signed out.');
    expect((await there.get('/account')).url.pathname).toBe('/sign-in');
    expect((await here.get('/account')).url.pathname).toBe('/account');
    const audit = await t.db
      .selectFrom('audit_events')
      .selectAll()
      .where('event', '=', 'session.ended')
      .where('actor_user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(audit.details).toMatchObject({ session_environment: 'sandbox', via: 'security_page' });

    const own = sessionIds(done.html);
    expect(own).toHaveLength(1);
    const out = await here.browser.request(`${here.origin}/account/security/sessions/sign-out`, {
      method: 'POST',
      form: { csrf: csrfOf(done.html), session: own[0]! },
    });
    expect(out.url.pathname).toBe('/sign-in');
    expect((await here.get('/account')).url.pathname).toBe('/sign-in');
  });

  it('signs out everywhere, this browser too, and refuses a post without its CSRF token; applications keep their access', async () => {
    const s = await createStaff(t.db);
    const user = s.users.owner;
    const here = await dashboardSession(server, 'production', user);
    const there = await dashboardSession(server, 'sandbox', user);
    const granted = await obtainTokens(server, {
      environment: 'production',
      client: app,
      clientId: app.client_id,
      redirectUri: REDIRECT,
      scope: 'openid read_only',
      login: user,
    });
    const page = await here.get('/account/security');
    const forged = await here.browser.request(`${here.origin}/account/security/sessions/sign-out-everywhere`, {
      method: 'POST',
      form: { csrf: 'nope' },
    });
    expect(forged.status).toBe(403);
    expect((await there.get('/account')).url.pathname).toBe('/account');

    const out = await here.browser.submit(page, '/sessions/sign-out-everywhere');
    expect(out.url.pathname).toBe('/sign-in');
    expect(out.html).toContain('You are signed out.');
    expect((await here.get('/account')).url.pathname).toBe('/sign-in');
    expect((await there.get('/account')).url.pathname).toBe('/sign-in');
    expect(await t.db.selectFrom('browser_sessions').select('id').where('user_id', '=', user.id).execute()).toEqual([]);
    expect(
      (
        await tokenRequest(server, 'production', app, {
          grant_type: 'refresh_token',
          refresh_token: granted.tokens.body.refresh_token as string,
        })
      ).status,
    ).toBe(200);
    expect(
      await t.db
        .selectFrom('audit_events')
        .select('details')
        .where('event', '=', 'session.ended_everywhere')
        .where('actor_user_id', '=', user.id)
        .executeTakeFirstOrThrow(),
    ).toMatchObject({ details: { sessions_ended: 3 } });
  });

  it('names browsers by their User-Agent, briefly', () => {
    expect(browserName('Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0')).toBe('Firefox on Linux');
    expect(
      browserName('Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15'),
    ).toBe('Safari on macOS');
    expect(
      browserName(
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0',
      ),
    ).toBe('Edge on Windows');
    expect(
      browserName('Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36'),
    ).toBe('Chrome on Android');
    expect(browserName('curl/8.5.0')).toBe('curl');
    expect(browserName(null)).toBe('Unknown browser');
    expect(browserName('something')).toBe('Another program');
  });
});
