import { describe, expect, it } from 'vitest';
import { FormBrowser } from '../helpers/browser.js';
import { dashboardSession, enrolAuthenticator } from '../helpers/dashboard.js';
import { nextCode, secretOnPage, setupCode } from '../helpers/authenticator.js';
import { endpoints } from '../helpers/flow.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const origin = () => endpoints(server, 'production').dashboard;
const hasSession = (browser: FormBrowser) => browser.cookieHeader(new URL(origin())).includes('alm_production_session=');

async function passwordStep(user: { email: string; password: string }) {
  const browser = new FormBrowser(() => false);
  const form = await browser.request(`${origin()}/sign-in?next=/account`);
  const page = await browser.submit(form, '/sign-in', user);
  return { browser, page };
}

describe('second factors on the dashboard', () => {
  it('at an IP-address dashboard (the dev default) offers no passkey and says why; the pages keep their no-script policy', async () => {
    const s = await createStaff(t.db);
    const session = await dashboardSession(server, 'production', s.users.member);
    const security = await session.get('/account/security');
    expect(security.html).toContain('Passkeys need this dashboard at a domain name, and it is at an IP address');
    expect(security.html).not.toContain('data-passkey');
    expect(security.html).not.toContain('<script');
    const signIn = await fetch(`${origin()}/sign-in`);
    expect(signIn.headers.get('content-security-policy')).not.toContain('script-src');
    expect(await signIn.text()).not.toContain('Sign in with a passkey');
    // Asked for anyway (a stale page, a script): there are no passkey options here.
    const anonymous = new FormBrowser(() => false);
    const page = await anonymous.request(`${origin()}/sign-in`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)![1]!;
    expect((await anonymous.request(`${origin()}/sign-in/passkey/options`, { method: 'POST', form: { csrf } })).status).toBe(404);
  });

  it('sets up an authenticator app from the Security page: codes shown once, hashed at rest, and the next sign-in asks for a code', async () => {
    const s = await createStaff(t.db);
    const user = s.users.member;
    const session = await dashboardSession(server, 'production', user);
    expect((await session.get('/account/security')).html).toContain('Set up an authenticator app');
    const codes = await enrolAuthenticator(session, user.email);
    const stored = await t.db.selectFrom('recovery_codes').select('code_hash').where('user_id', '=', user.id).execute();
    expect(stored).toHaveLength(10);
    for (const code of codes) expect(stored.map((r) => r.code_hash).join()).not.toContain(code.replace(/-/g, ''));
    await server.runtime.background.drain();
    const notices = await t.db.selectFrom('outbound_mail').select(['subject', 'body']).where('recipient', '=', user.email).execute();
    expect(notices.map((n) => n.subject)).toEqual(['A second factor was added to your Almoner account']);
    expect(notices[0]!.body).toContain('an authenticator app');
    const security = await session.get('/account/security');
    expect(security.html).toContain('10 of 10 unused');
    expect(security.html).toContain('Remove the app');

    const { browser, page } = await passwordStep(user);
    expect(page.url.pathname).toBe('/sign-in/second-factor');
    expect(hasSession(browser)).toBe(false);
    const wrong = await browser.submit(page, '/sign-in/second-factor', { code: '123456' });
    expect(wrong.status).toBe(401);
    expect(hasSession(browser)).toBe(false);
    const done = await browser.submit(wrong, '/sign-in/second-factor', { code: await nextCode(user.email) });
    expect(done.url.pathname).toBe('/account');
    expect(hasSession(browser)).toBe(true);
    expect(done.html).toContain('You sign in with your password and a second factor.');
  });

  it('a code from the app just used is refused, saying it was already used (not that it did not work)', async () => {
    const s = await createStaff(t.db);
    const user = s.users.owner;
    const session = await dashboardSession(server, 'production', user);
    const setup = await session.get('/account/security/authenticator');
    // The code that set the app up a moment ago, typed again (still within the app's window).
    const code = setupCode(user.email, secretOnPage(setup.html));
    expect((await session.browser.submit(setup, '/account/security/authenticator', { code })).html).toContain('recovery codes');
    const signIn = await passwordStep(user);
    const again = await signIn.browser.submit(signIn.page, '/sign-in/second-factor', { code });
    expect(again.status).toBe(401);
    expect(again.html).toContain('That code was already used: each code works once. Wait for the next code from your app');
    expect(again.html).not.toContain('That code did not work');
    expect(hasSession(signIn.browser)).toBe(false);
    // "Confirm it is you" on the Security page checks codes the same way.
    const confirm = await session.get('/account/security/confirm');
    const refused = await session.browser.submit(confirm, '/account/security/confirm', { code });
    expect(refused.status).toBe(401);
    expect(refused.html).toContain('That code was already used');
  });

  it('a recovery code signs in once and is refused the second time', async () => {
    const s = await createStaff(t.db);
    const user = s.users.admin;
    const codes = await enrolAuthenticator(await dashboardSession(server, 'production', user), user.email);
    const first = await passwordStep(user);
    const used = await first.browser.submit(first.page, '/sign-in/second-factor', { code: codes[3]!.toLowerCase() });
    expect(used.url.pathname).toBe('/account');
    const second = await passwordStep(user);
    const again = await second.browser.submit(second.page, '/sign-in/second-factor', { code: codes[3]! });
    expect(again.status).toBe(401);
    expect(again.html).toContain('That recovery code was already used');
    expect(hasSession(second.browser)).toBe(false);
    const audit = await t.db
      .selectFrom('audit_events')
      .select('event')
      .where('actor_user_id', '=', user.id)
      .where('event', '=', 'second_factor.recovery_code_used')
      .execute();
    expect(audit).toHaveLength(1);
  });

  it('removing the app needs the password again; then sign-in asks for the password only', async () => {
    const s = await createStaff(t.db);
    const user = s.users.owner;
    const session = await dashboardSession(server, 'production', user);
    await enrolAuthenticator(session, user.email);
    const page = await session.get('/account/security');
    const refused = await session.browser.submit(page, '/authenticator/remove', { password: 'not the password' });
    expect(refused.status).toBe(401);
    expect(await t.db.selectFrom('totp_credentials').select('user_id').where('user_id', '=', user.id).executeTakeFirst()).toBeDefined();
    const removed = await session.browser.submit(page, '/authenticator/remove', { password: user.password });
    expect(removed.html).toContain('The authenticator app is removed.');
    expect(await t.db.selectFrom('totp_credentials').select('user_id').where('user_id', '=', user.id).executeTakeFirst()).toBeUndefined();
    expect(await t.db.selectFrom('recovery_codes').select('user_id').where('user_id', '=', user.id).execute()).toEqual([]);
    await server.runtime.background.drain();
    const subjects = (await t.db.selectFrom('outbound_mail').select('subject').where('recipient', '=', user.email).execute()).map(
      (m) => m.subject,
    );
    expect(subjects).toContain('A second factor was removed from your Almoner account');
    const { page: after } = await passwordStep(user);
    expect(after.url.pathname).toBe('/account');
  });

  it('new recovery codes replace the old ones (with the password)', async () => {
    const s = await createStaff(t.db);
    const user = s.users.read_only;
    const session = await dashboardSession(server, 'production', user);
    const old = await enrolAuthenticator(session, user.email);
    const shown = await session.browser.submit(await session.get('/account/security'), '/recovery-codes', { password: user.password });
    expect(shown.html).toContain('Your earlier recovery codes no longer work.');
    const { browser, page } = await passwordStep(user);
    expect((await browser.submit(page, '/sign-in/second-factor', { code: old[0]! })).status).toBe(401);
  });
});
