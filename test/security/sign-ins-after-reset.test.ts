import { beforeEach, describe, expect, it } from 'vitest';
import { disableUser } from '../../src/accounts/user-lifecycle.js';
import { FormBrowser } from '../helpers/browser.js';
import { nextCode } from '../helpers/authenticator.js';
import { dashboardSession, enrolAuthenticator } from '../helpers/dashboard.js';
import { authorizationRequest, endpoints } from '../helpers/flow.js';
import { askForReset, clearAttemptCounters, resetLinksFor } from '../helpers/password-reset.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Sign-ins already under way when the credentials change (docs/security.md, "Sign-ins under
 * way when a password is reset"): a password reset, a password change and a disabled account
 * end every session of the user and every sign-in in progress: an authorization whose password
 * step finished before (its interaction not yet resumed, or its consent on screen), a
 * second-factor step waiting in its cookie on the dashboard or in the flow. A session bound to
 * an earlier credentials epoch is refused where it is used, even if its row survived.
 */
const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const REDIRECT = 'https://app.example.org/callback';
const dashboard = () => endpoints(server, 'production').dashboard;

beforeEach(() => clearAttemptCounters(t.db));

/** The user resets their password with a mailed link, in a browser of their own. */
async function resetPassword(email: string, password = 'a brand new passphrase') {
  await askForReset(dashboard(), email);
  const link = (await resetLinksFor(server, t.db, email)).at(-1)!;
  const browser = new FormBrowser(() => false);
  const done = await browser.submit(await browser.request(link), '/reset-password/', { password, confirmation: password });
  expect(done.status).toBe(200);
}

/** A browser that stops at the client, and (when asked) at the provider's resume URL. */
function flowBrowser(stopAtResume: boolean) {
  return new FormBrowser(
    (next) => next.origin === new URL(REDIRECT).origin || (stopAtResume && next.pathname.startsWith('/oauth/authorize/')),
  );
}

async function startFlow(scope = 'openid read_only', browser = flowBrowser(true)) {
  const client = await server.registerClient({ environment: 'production', redirectUris: [REDIRECT] });
  const { url } = await authorizationRequest(server, {
    environment: 'production',
    clientId: client.client_id,
    redirectUri: REDIRECT,
    scope,
  });
  return { browser, login: await browser.request(url.toString()) };
}

const sessionsOf = (userId: string) =>
  t.db
    .selectFrom('oidc_models')
    .select('id')
    .where('model', '=', 'Session')
    .where((eb) => eb(eb.ref('payload', '->>').key('accountId' as never), '=', userId))
    .execute();

function memberOf(s: Staff) {
  return s.users.member;
}

describe('sign-ins under way when the credentials change', () => {
  it('an authorization whose password step finished before a reset does not resume after it: no session, no code', async () => {
    const s = await createStaff(t.db);
    const user = memberOf(s);
    const { browser, login } = await startFlow();
    const afterPassword = await browser.submit(login, '/login', { email: user.email, password: user.password });
    expect(afterPassword.location?.pathname).toMatch(/^\/oauth\/authorize\//);

    await resetPassword(user.email);
    const resumed = await browser.request(afterPassword.location!.toString());
    expect(resumed.location).toBeUndefined();
    expect(resumed.html).not.toContain('/consent"');
    expect(resumed.status).toBeGreaterThanOrEqual(400);
    expect(await sessionsOf(user.id)).toEqual([]);
  });

  it('a consent on screen when the password is reset is not approved: the page and its form are gone', async () => {
    const s = await createStaff(t.db);
    const user = memberOf(s);
    const { browser, login } = await startFlow('openid read_only', flowBrowser(false));
    const consent = await browser.submit(login, '/login', { email: user.email, password: user.password });
    expect(consent.html).toContain('/consent"');

    await resetPassword(user.email);
    const again = await browser.request(consent.url.toString());
    expect(again.html).not.toContain('/consent"');
    const approved = await browser.submit(consent, '/consent');
    expect(approved.location).toBeUndefined();
    expect(await t.db.selectFrom('oauth_authorizations').select('grant_id').where('user_id', '=', user.id).execute()).toEqual([]);
  });

  it('a dashboard sign-in waiting for its second factor when the password is reset does not complete', async () => {
    const s = await createStaff(t.db);
    const user = s.users.admin;
    await enrolAuthenticator(await dashboardSession(server, 'production', user), user.email);
    const browser = new FormBrowser(() => false);
    const step = await browser.submit(await browser.request(`${dashboard()}/sign-in?next=/account`), '/sign-in', user);
    expect(step.url.pathname).toBe('/sign-in/second-factor');

    await resetPassword(user.email);
    const code = await nextCode(user.email, t.db);
    const late = await browser.submit(step, '/sign-in/second-factor', { code });
    expect(late.url.pathname).toBe('/sign-in');
    expect(browser.cookieHeader(new URL(dashboard()))).not.toContain('alm_production_session=');
  });

  it("the flow's second-factor step waiting when the password is reset does not complete", async () => {
    const s = await createStaff(t.db);
    const user = s.users.owner;
    await enrolAuthenticator(await dashboardSession(server, 'production', user), user.email);
    const { browser, login } = await startFlow();
    const step = await browser.submit(login, '/login', { email: user.email, password: user.password });
    expect(step.html).toContain('/second-factor"');

    await resetPassword(user.email);
    const late = await browser.submit(step, '/second-factor', { code: await nextCode(user.email, t.db) });
    expect(late.location).toBeUndefined();
    expect(late.html).toContain('name="password"');
    expect(await sessionsOf(user.id)).toEqual([]);
  });

  it('a password change and a disabled account end sign-ins in progress too', async () => {
    const s = await createStaff(t.db);
    const changer = s.users.read_only;
    const first = await startFlow();
    const pending = await first.browser.submit(first.login, '/login', { email: changer.email, password: changer.password });
    const session = await dashboardSession(server, 'production', changer);
    const changed = await session.browser.submit(await session.get('/account/password'), '/account/password', {
      current: changer.password,
      password: 'changed passphrase one',
      confirmation: 'changed passphrase one',
    });
    expect(changed.html).toContain('Your password was changed.');
    expect((await session.get('/account')).url.pathname).toBe('/account');
    expect((await first.browser.request(pending.location!.toString())).location).toBeUndefined();

    const disabled = s.users.member;
    const second = await startFlow();
    const waiting = await second.browser.submit(second.login, '/login', { email: disabled.email, password: disabled.password });
    await disableUser(t.db, disabled.email);
    expect((await second.browser.request(waiting.location!.toString())).location).toBeUndefined();
    expect(await sessionsOf(disabled.id)).toEqual([]);
  });

  it('a session bound to an earlier credentials epoch is refused where it is used, even when its row survived', async () => {
    const s = await createStaff(t.db);
    const user = memberOf(s);
    const session = await dashboardSession(server, 'production', user);
    const { browser, login } = await startFlow('openid read_only', flowBrowser(false));
    const consent = await browser.submit(login, '/login', { email: user.email, password: user.password });
    expect(consent.html).toContain('/consent"');
    const rows = (await sessionsOf(user.id)).length;
    expect(rows).toBe(2);

    // The epoch moves on without the rows being deleted (as when a session is written by a
    // request that raced the change).
    await t.db
      .updateTable('users')
      .set((eb) => ({ credentials_epoch: eb('credentials_epoch', '+', 1) }))
      .where('id', '=', user.id)
      .execute();
    expect((await sessionsOf(user.id)).length).toBe(2);
    expect((await session.get('/account')).url.pathname).toBe('/sign-in');
    const client = await server.registerClient({ environment: 'production', redirectUris: [REDIRECT] });
    const { url } = await authorizationRequest(server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'openid read_only',
    });
    const again = await browser.request(url.toString());
    expect(again.location).toBeUndefined();
    expect(again.html).toContain('name="password"');
  });
});
