import { describe, expect, it } from 'vitest';
import { FormBrowser } from '../helpers/browser.js';
import { confirmSecondFactor, dashboardSession, enrolAuthenticator } from '../helpers/dashboard.js';
import { recoveryCodesOnPage, rememberRecoveryCodes, secretOnPage, setupCode } from '../helpers/authenticator.js';
import { authorizationRequest } from '../helpers/flow.js';
import { createStaff } from '../helpers/oauth-server.js';
import { SoftwarePasskey } from '../helpers/software-passkey.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Planting a second factor from a session that signed in with the password only
 * (docs/security.md, "Planting a second factor from a password session"): a session opened
 * before the user set up a factor, or stolen, tries to add a passkey or an authenticator app,
 * to make new recovery codes or to remove a factor; and a factor added in a session tries to
 * count as that session's sign-in. The dashboards are at localhost (WebAuthn needs a domain).
 */
const { testDatabase: t, server } = useOAuthServer({ staff: 0, dashboardsAtLocalhost: true });
const origin = () => server.urls.dashboard;
const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;
type Session = Awaited<ReturnType<typeof dashboardSession>>;

/** The session asks for passkey registration options, as the Security page's script does. */
async function registrationOptions(session: Session) {
  const page = await session.get('/account/security');
  return session.browser.request(`${origin()}/account/security/passkeys/options`, {
    method: 'POST',
    form: { csrf: csrfOf(page.html), name: 'My key' },
  });
}

/** Registers a software passkey from the session: the options, then the browser's answer. */
async function registerPasskey(session: Session, passkey: SoftwarePasskey) {
  const options = await registrationOptions(session);
  expect(options.status).toBe(200);
  const { challenge } = JSON.parse(options.html) as { challenge: string };
  const page = await session.get('/account/security');
  return session.browser.request(`${origin()}/account/security/passkeys`, {
    method: 'POST',
    form: { csrf: csrfOf(page.html), name: 'My key', response: passkey.registration(challenge) },
  });
}

const passkeyRows = (userId: string) =>
  t.db.selectFrom('webauthn_credentials').select(['id', 'name']).where('user_id', '=', userId).execute();
const recoveryHashes = async (userId: string) =>
  (await t.db.selectFrom('recovery_codes').select('code_hash').where('user_id', '=', userId).execute()).map((r) => r.code_hash).sort();
const requireMfa = (orgId: string) => t.db.updateTable('organizations').set({ require_mfa: true }).where('id', '=', orgId).execute();

describe('planting a second factor from a password session', () => {
  it('a session signed in with the password only cannot add a passkey once the user has a second factor, nor count as two factors', async () => {
    const s = await createStaff(t.db);
    const user = s.users.admin;
    // The thief's session: the password alone, before the user set up a factor.
    const thief = await dashboardSession(server, 'production', user);
    // The user sets up an authenticator app in their own browser.
    await enrolAuthenticator(await dashboardSession(server, 'production', user), user.email);

    const security = await thief.get('/account/security');
    expect(security.html).toContain('Confirm it is you');
    expect(security.html).not.toContain('data-passkey="register"');
    const options = await registrationOptions(thief);
    expect(options.status).toBe(403);
    expect(await passkeyRows(user.id)).toEqual([]);

    // Even with a registration answer in hand, there is no challenge to answer: nothing is added.
    const page = await thief.get('/account/security');
    const forged = await thief.browser.request(`${origin()}/account/security/passkeys`, {
      method: 'POST',
      form: { csrf: csrfOf(page.html), name: 'Thief', response: new SoftwarePasskey(origin()).registration('A'.repeat(43)) },
    });
    expect(forged.status).not.toBe(200);
    expect(await passkeyRows(user.id)).toEqual([]);

    // The thief's session still counts as the password only: an organization that requires a
    // second factor stays closed to it.
    await requireMfa(s.orgId);
    expect((await thief.get(`/orgs/${s.ein}/members`)).status).toBe(403);
  });

  it('adding a factor, even the first, never changes how the session signed in; confirming with it does', async () => {
    const s = await createStaff(t.db);
    const user = s.users.owner;
    await requireMfa(s.orgId);
    const session = await dashboardSession(server, 'production', user);
    const passkey = new SoftwarePasskey(origin());
    const added = await registerPasskey(session, passkey);
    expect(added.status).toBe(200);
    expect(added.html).toContain('Your passkey is ready');
    expect(await passkeyRows(user.id)).toHaveLength(1);
    // The passkey was registered, not used to sign in: the session is still a password session.
    expect((await session.get(`/orgs/${s.ein}/members`)).status).toBe(403);

    // "Confirm it is you" with the new passkey steps the session up.
    const confirm = await session.get(`/account/security/confirm?next=${encodeURIComponent(`/orgs/${s.ein}/members`)}`);
    const asked = await session.browser.request(`${origin()}/account/security/confirm/passkey/options`, {
      method: 'POST',
      form: { csrf: csrfOf(confirm.html) },
    });
    const { challenge } = JSON.parse(asked.html) as { challenge: string };
    const confirmed = await session.browser.request(`${origin()}/account/security/confirm/passkey`, {
      method: 'POST',
      form: { csrf: csrfOf(confirm.html), next: `/orgs/${s.ein}/members`, response: passkey.answer(challenge) },
    });
    expect(confirmed.url.pathname).toBe(`/orgs/${s.ein}/members`);
    expect(confirmed.status).toBe(200);
  });

  it('a password session cannot set up, replace or remove a factor, nor make new recovery codes, while the user has one', async () => {
    const s = await createStaff(t.db);
    const user = s.users.member;
    const thief = await dashboardSession(server, 'production', user);
    // The user's own passkey and recovery codes, made in their browser.
    const passkey = new SoftwarePasskey(origin());
    await registerPasskey(await dashboardSession(server, 'production', user), passkey);
    const codesBefore = await recoveryHashes(user.id);
    expect(codesBefore).toHaveLength(10);

    const setup = await thief.get('/account/security/authenticator');
    expect(setup.url.pathname).toBe('/account/security/confirm');
    expect(await t.db.selectFrom('totp_credentials').select('user_id').where('user_id', '=', user.id).executeTakeFirst()).toBeUndefined();
    const page = await thief.get('/account/security');
    const appCode = await thief.browser.request(`${origin()}/account/security/authenticator`, {
      method: 'POST',
      form: { csrf: csrfOf(page.html), code: '123456' },
    });
    expect(appCode.url.pathname).toBe('/account/security/confirm');
    const codes = await thief.browser.request(`${origin()}/account/security/recovery-codes`, {
      method: 'POST',
      form: { csrf: csrfOf(page.html), password: user.password },
    });
    expect(codes.url.pathname).toBe('/account/security/confirm');
    const [row] = await passkeyRows(user.id);
    const removal = await thief.browser.request(`${origin()}/account/security/passkeys/remove`, {
      method: 'POST',
      form: { csrf: csrfOf(page.html), password: user.password, id: row!.id },
    });
    expect(removal.url.pathname).toBe('/account/security/confirm');

    expect(await recoveryHashes(user.id)).toEqual(codesBefore);
    expect(await passkeyRows(user.id)).toHaveLength(1);
    await server.runtime.background.drain();
    const subjects = (await t.db.selectFrom('outbound_mail').select('subject').where('recipient', '=', user.email).execute()).map(
      (m) => m.subject,
    );
    expect(subjects).not.toContain('A second factor was removed from your Almoner account');
    expect(subjects).not.toContain('New recovery codes were made for your Almoner account');
  });

  it('the authorization flow sets up a first factor only: a user who has one is asked for it instead', async () => {
    const s = await createStaff(t.db);
    const user = s.users.member;
    const client = await server.registerClient({ environment: 'production' });
    const { url } = await authorizationRequest(server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri: 'https://app.example.org/callback',
      scope: 'openid read_write',
    });
    const browser = new FormBrowser((next) => next.origin === 'https://app.example.org');
    const login = await browser.request(url.toString());
    const setupPage = await browser.submit(login, '/login', { email: user.email, password: user.password });
    expect(setupPage.html).toContain('/second-factor/setup"');
    const secret = secretOnPage(setupPage.html);
    // Meanwhile the user adds a passkey in their own browser.
    await new SoftwarePasskey(origin()).storeFor(t.db, user.id);

    const attempt = await browser.submit(setupPage, '/second-factor/setup', { code: setupCode(user.email, secret) });
    expect(attempt.status).toBe(409);
    expect(attempt.location).toBeUndefined();
    expect(attempt.html).toContain('/second-factor"');
    expect(attempt.html).not.toContain('/second-factor/setup"');
    const totp = await t.db.selectFrom('totp_credentials').select('confirmed_at').where('user_id', '=', user.id).executeTakeFirst();
    expect(totp?.confirmed_at ?? null).toBeNull();
    expect(await recoveryHashes(user.id)).toEqual([]);
  });

  it('new recovery codes need a second factor given in the last 10 minutes, and mail the user', async () => {
    const s = await createStaff(t.db);
    const user = s.users.read_only;
    const session = await dashboardSession(server, 'production', user);
    await enrolAuthenticator(session, user.email);
    const shown = await session.browser.submit(await session.get('/account/security'), '/recovery-codes', { password: user.password });
    expect(shown.html).toContain('Your new recovery codes');
    rememberRecoveryCodes(user.email, recoveryCodesOnPage(shown.html));
    await server.runtime.background.drain();
    const notice = await t.db
      .selectFrom('outbound_mail')
      .select(['subject', 'body'])
      .where('recipient', '=', user.email)
      .where('subject', '=', 'New recovery codes were made for your Almoner account')
      .executeTakeFirst();
    expect(notice?.body).toContain('no longer work');

    // Eleven minutes later the proof is stale: the page asks to confirm first.
    await t.db
      .updateTable('browser_sessions')
      .set({ factor_proved_at: new Date(Date.now() - 11 * 60_000) })
      .where('user_id', '=', user.id)
      .execute();
    const page = await session.get('/account/security');
    expect(page.html).toContain('Confirm it is you');
    const stale = await session.browser.request(`${origin()}/account/security/recovery-codes`, {
      method: 'POST',
      form: { csrf: csrfOf(page.html), password: user.password },
    });
    expect(stale.url.pathname).toBe('/account/security/confirm');
    await confirmSecondFactor(session, user.email);
    expect(
      (await session.browser.submit(await session.get('/account/security'), '/recovery-codes', { password: user.password })).html,
    ).toContain('Your new recovery codes');
  });

  it('removing a factor ends the other sessions and sign-ins in progress of the user, keeps this one, and mails a notice', async () => {
    const s = await createStaff(t.db);
    const user = s.users.owner;
    const session = await dashboardSession(server, 'production', user);
    await enrolAuthenticator(session, user.email);
    const other = await dashboardSession(server, 'production', user);
    expect((await other.get('/account')).url.pathname).toBe('/account');
    // A sign-in waiting for its second factor in a third browser.
    const waiting = new FormBrowser(() => false);
    const form = await waiting.request(`${origin()}/sign-in?next=/account`);
    const step = await waiting.submit(form, '/sign-in', user);
    expect(step.url.pathname).toBe('/sign-in/second-factor');

    const removed = await session.browser.submit(await session.get('/account/security'), '/authenticator/remove', {
      password: user.password,
    });
    expect(removed.url.pathname).toBe('/account/security');
    expect(removed.html).toContain('The authenticator app is removed.');
    expect((await session.get('/account')).url.pathname).toBe('/account');
    expect((await other.get('/account')).url.pathname).toBe('/sign-in');
    // The waiting sign-in is over: its password step was before the change, so whatever it
    // posts goes back to the password (a live one would answer a wrong code 401 in place).
    const late = await waiting.submit(step, '/sign-in/second-factor', { code: '000000' });
    expect(late.url.pathname).toBe('/sign-in');
    await server.runtime.background.drain();
    const subjects = (await t.db.selectFrom('outbound_mail').select('subject').where('recipient', '=', user.email).execute()).map(
      (m) => m.subject,
    );
    expect(subjects).toContain('A second factor was removed from your Almoner account');
  });
});
