import { beforeEach, describe, expect, it } from 'vitest';
import { addUser } from '../../src/accounts/service.js';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { FormBrowser } from '../helpers/browser.js';
import { captureLogs } from '../helpers/log-capture.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { askForReset, clearAttemptCounters, resetLinksFor, sha256 } from '../helpers/password-reset.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Password reset on the dashboard (docs/accounts.md, "Password reset"): the sign-in page's
 * "Forgot your password?", the mailed single-use link, the new password, every session gone.
 */
const logs = captureLogs('warn');
const { testDatabase: t, server } = useOAuthServer({ staff: 0, logger: logs.logger });

beforeEach(() => clearAttemptCounters(t.db));

const NEW_PASSWORD = 'correct horse battery staple';

describe('password reset', () => {
  it('mails a single-use link; the new password works, the old does not, and every session on both dashboards ends', async () => {
    const s = await createStaff(t.db);
    const user = s.users.member;
    const production = await dashboardSession(server, 'production', user);
    const sandbox = await dashboardSession(server, 'sandbox', user);
    expect((await production.get('/account')).url.pathname).toBe('/account');

    // The sign-in page links to the form.
    const anonymous = new FormBrowser(() => false);
    const signIn = await anonymous.request(`${server.urls.dashboard}/sign-in`);
    expect(signIn.html).toContain('<a href="/forgot-password">Forgot your password?</a>');
    const answered = await askForReset(server.urls.dashboard, user.email.toUpperCase(), anonymous);
    expect(answered.status).toBe(200);
    expect(answered.html).toContain('If an account uses that address, we sent a link to it');

    const [link] = await resetLinksFor(server, t.db, user.email);
    expect(link).toMatch(new RegExp(`^${server.urls.dashboard}/reset-password/`));
    const token = link!.split('/').at(-1)!;
    // Only the token's SHA-256 is stored.
    const rows = await t.db.selectFrom('password_resets').selectAll().where('user_id', '=', user.id).execute();
    expect(rows.map((r) => r.token_hash)).toEqual([sha256(token)]);
    expect(JSON.stringify(rows)).not.toContain(token);
    const lifetime = rows[0]!.expires_at.getTime() - rows[0]!.created_at.getTime();
    expect(Math.abs(lifetime - 30 * 60_000)).toBeLessThan(2000);

    const form = await anonymous.request(link!);
    expect(form.status).toBe(200);
    expect(form.html).toContain(`For <strong>${user.email}</strong>`);
    const headers = await fetch(link!);
    expect(headers.headers.get('referrer-policy')).toBe('no-referrer');
    expect(headers.headers.get('cache-control')).toBe('no-store');

    // The policy and the confirmation are checked; nothing changes on refusal.
    const differ = await anonymous.submit(form, '/reset-password/', { password: NEW_PASSWORD, confirmation: `${NEW_PASSWORD}!` });
    expect(differ.status).toBe(400);
    expect(differ.html).toContain('The two passwords differ');
    const common = await anonymous.submit(form, '/reset-password/', { password: 'password1234', confirmation: 'password1234' });
    expect(common.status).toBe(400);
    expect(common.html).toContain('list of common passwords');
    const short = await anonymous.submit(form, '/reset-password/', { password: 'short', confirmation: 'short' });
    expect(short.status).toBe(400);
    expect(short.html).toContain('at least 10 characters');

    const done = await anonymous.submit(form, '/reset-password/', { password: NEW_PASSWORD, confirmation: NEW_PASSWORD });
    expect(done.status).toBe(200);
    expect(done.html).toContain('Your password was changed');
    expect(done.html).toContain('href="/sign-in"');

    // Both dashboards' sessions are gone.
    expect((await production.get('/account')).url.pathname).toBe('/sign-in');
    expect((await sandbox.get('/account')).url.pathname).toBe('/sign-in');
    expect(
      await t.db
        .selectFrom('oidc_models')
        .select('id')
        .where('model', '=', 'Session')
        .where((eb) => eb(eb.ref('payload', '->>').key('accountId'), '=', user.id))
        .execute(),
    ).toEqual([]);
    // The new password signs in, the old one does not.
    await expect(dashboardSession(server, 'production', { email: user.email, password: user.password })).rejects.toThrow(
      /did not reach the account page \(401/,
    );
    await dashboardSession(server, 'production', { email: user.email, password: NEW_PASSWORD });

    const stored = await t.db
      .selectFrom('users')
      .select(['password_changed_at', 'password_hash'])
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(stored.password_changed_at).not.toBeNull();
    expect(stored.password_hash).toMatch(/^\$argon2id\$/);
    const audit = await t.db
      .selectFrom('audit_events')
      .selectAll()
      .where('event', '=', 'user.password_reset')
      .where('actor_user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({
      environment: 'production',
      details: { user_id: user.id, email: user.email, via: 'link', sessions_ended: 2 },
    });
    expect(JSON.stringify(audit)).not.toContain(token);
    // The account is told, with links and no secret.
    await server.runtime.background.drain();
    const notice = await t.db
      .selectFrom('outbound_mail')
      .selectAll()
      .where('recipient', '=', user.email)
      .where('subject', '=', 'Your Almoner password was changed')
      .executeTakeFirstOrThrow();
    expect(notice.body).toContain('reset with an e-mailed link');
    expect(notice.body).toContain(`${server.urls.dashboard}/forgot-password`);
    expect(notice.body).not.toContain(NEW_PASSWORD);

    // The link worked once.
    const again = await anonymous.request(link!);
    expect(again.status).toBe(410);
    expect(again.html).toContain('This link no longer works');
    expect(again.html).toContain('href="/forgot-password"');
  });

  it('answers an unknown address exactly like a known one, and sends nothing', async () => {
    const answered = await askForReset(server.urls.dashboard, 'nobody-here@example.org');
    expect(answered.status).toBe(200);
    expect(answered.html).toContain('If an account uses that address, we sent a link to it');
    await server.runtime.background.drain();
    expect(await t.db.selectFrom('outbound_mail').select('id').where('recipient', '=', 'nobody-here@example.org').execute()).toEqual([]);
  });

  it('refuses a malformed address with a 400 saying so', async () => {
    const answered = await askForReset(server.urls.dashboard, 'not an address');
    expect(answered.status).toBe(400);
    expect(answered.html).toContain('Enter the e-mail address you sign in with.');
  });

  it('sends no link to a disabled account, and a link of an account disabled since no longer works', async () => {
    const s = await createStaff(t.db);
    await askForReset(server.urls.dashboard, s.users.admin.email);
    const [link] = await resetLinksFor(server, t.db, s.users.admin.email);
    await t.db.updateTable('users').set({ disabled_at: new Date() }).where('id', '=', s.users.admin.id).execute();
    expect((await fetch(link!)).status).toBe(410);
    await askForReset(server.urls.dashboard, s.users.admin.email);
    expect(await resetLinksFor(server, t.db, s.users.admin.email)).toHaveLength(1);
  });

  it('sends at most 3 links an hour for one address, even to a concurrent burst, answering every request the same', async () => {
    const s = await createStaff(t.db);
    const answers = await Promise.all(Array.from({ length: 10 }, () => askForReset(server.urls.dashboard, s.users.owner.email)));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    const bodies = answers.map((a) => a.html.replace(/name="csrf" value="[^"]+"/, ''));
    expect(bodies.filter((b) => b !== bodies[0])).toEqual([]);
    expect(await resetLinksFor(server, t.db, s.users.owner.email)).toHaveLength(3);
    expect(await t.db.selectFrom('password_resets').select('token_hash').where('user_id', '=', s.users.owner.id).execute()).toHaveLength(3);
  });

  it('processes at most 20 requests an hour from one caller address, even in a concurrent burst', async () => {
    const emails: string[] = [];
    for (let i = 0; i < 26; i += 1) {
      const email = `burst-${i}-${Date.now()}@example.org`;
      await t.db.insertInto('users').values({ email, password_hash: 'not-a-hash' }).execute();
      emails.push(email);
    }
    const answers = await Promise.all(emails.map((email) => askForReset(server.urls.dashboard, email)));
    expect(answers.map((a) => a.status)).toEqual(Array(26).fill(200));
    await server.runtime.background.drain();
    const sent = await t.db.selectFrom('outbound_mail').select('recipient').where('recipient', 'in', emails).execute();
    // Failed background tasks would be logged as warnings: there are none.
    expect(sent, JSON.stringify(logs.records())).toHaveLength(20);
  });

  it('leaves older links usable until the password changes, then ends them all', async () => {
    const user = await addUser(t.db, { email: `two-links-${Date.now()}@example.org`, password: 'first password 123' }, MIN_PASSWORD_PARAMS);
    await askForReset(server.urls.dashboard, user.email);
    // The mail is sent after the answer: wait for it, so the two links are mailed in the order asked.
    await server.runtime.background.drain();
    await askForReset(server.urls.sandboxDashboard, user.email);
    const [first, second] = await resetLinksFor(server, t.db, user.email);
    expect(second).toMatch(new RegExp(`^${server.urls.sandboxDashboard}/reset-password/`));
    expect((await fetch(first!)).status).toBe(200);
    const browser = new FormBrowser(() => false);
    const form = await browser.request(second!);
    expect((await browser.submit(form, '/reset-password/', { password: NEW_PASSWORD, confirmation: NEW_PASSWORD })).status).toBe(200);
    expect((await fetch(first!)).status).toBe(410);
  });

  it('answers a link that never existed with 404, offering a new one', async () => {
    for (const token of ['A'.repeat(43), 'short', '..%2F..%2Fetc']) {
      const page = await fetch(`${server.urls.dashboard}/reset-password/${token}`);
      expect(page.status).toBe(404);
      expect(await page.text()).toContain('This link is not valid');
    }
  });
});
