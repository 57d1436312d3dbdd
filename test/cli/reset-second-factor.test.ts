import { describe, expect, it } from 'vitest';
import { FormBrowser } from '../helpers/browser.js';
import { runAdmin } from '../helpers/admin-cli.js';
import { dashboardSession, enrolAuthenticator } from '../helpers/dashboard.js';
import { createStaff } from '../helpers/oauth-server.js';
import { SoftwarePasskey } from '../helpers/software-passkey.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * `admin users reset-second-factor` (docs/operations.md, "Admin CLI"; docs/accounts.md, "Lost
 * second factors"): a user who lost their phone and their recovery codes gets every second
 * factor removed by the maker; every session and sign-in in progress ends, the user is mailed,
 * the audit log has one row, and the next sign-in asks for the password only.
 */
const { testDatabase: t, server } = useOAuthServer({ staff: 0 });

async function admin(argv: string[]) {
  const { code, stdout, stderr } = await runAdmin([...argv, '--json'], { DATABASE_URL: t.url });
  return { code, stderr, json: (stdout ? JSON.parse(stdout) : {}) as Record<string, unknown> };
}

describe('admin users reset-second-factor', () => {
  it('removes the app, the passkeys and the recovery codes, ends every session and sign-in in progress, mails and audits', async () => {
    const s = await createStaff(t.db);
    const user = s.users.admin;
    const session = await dashboardSession(server, 'production', user);
    await enrolAuthenticator(session, user.email);
    await new SoftwarePasskey('https://localhost:1').storeFor(t.db, user.id);
    const sandbox = await dashboardSession(server, 'sandbox', user);
    // A sign-in that gave its password and waits for the second factor.
    const waiting = new FormBrowser(() => false);
    const step = await waiting.submit(await waiting.request(`${server.urls.dashboard}/sign-in?next=/account`), '/sign-in', user);
    expect(step.url.pathname).toBe('/sign-in/second-factor');

    const reset = await admin(['users', 'reset-second-factor', '--email', user.email.toUpperCase()]);
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.json).toMatchObject({
      email: user.email,
      removed: { totp: true, passkeys: 1, recoveryCodes: 10 },
      sessions_ended: 2,
      notified: true,
    });

    for (const table of ['totp_credentials', 'webauthn_credentials', 'recovery_codes'] as const) {
      expect(await t.db.selectFrom(table).select('user_id').where('user_id', '=', user.id).execute(), table).toEqual([]);
    }
    expect((await session.get('/account')).url.pathname).toBe('/sign-in');
    expect((await sandbox.get('/account')).url.pathname).toBe('/sign-in');
    expect((await waiting.submit(step, '/sign-in/second-factor', { code: '000000' })).url.pathname).toBe('/sign-in');

    const notice = await t.db
      .selectFrom('outbound_mail')
      .select('body')
      .where('recipient', '=', user.email)
      .where('subject', '=', 'The second factors of your Almoner account were reset')
      .executeTakeFirstOrThrow();
    expect(notice.body).toContain('set up a second factor again');
    const audit = await t.db.selectFrom('audit_events').selectAll().where('event', '=', 'second_factor.reset').executeTakeFirstOrThrow();
    expect(audit.actor_user_id).toBeNull();
    expect(audit.details).toMatchObject({ user_id: user.id, totp: true, passkeys: 1, sessions_ended: 2 });

    // The next sign-in asks for the password only.
    const browser = new FormBrowser(() => false);
    const signedIn = await browser.submit(await browser.request(`${server.urls.dashboard}/sign-in?next=/account`), '/sign-in', user);
    expect(signedIn.url.pathname).toBe('/account');
  });

  it('for a user without a second factor changes nothing and mails nothing, and says so; exits 1 for an unknown address', async () => {
    const s = await createStaff(t.db);
    const user = s.users.member;
    const session = await dashboardSession(server, 'production', user);
    const none = await admin(['users', 'reset-second-factor', '--email', user.email]);
    expect(none.code, none.stderr).toBe(0);
    expect(none.json).toMatchObject({ removed: { totp: false, passkeys: 0, recoveryCodes: 0 }, sessions_ended: 0, notified: false });
    const text = await runAdmin(['users', 'reset-second-factor', '--email', user.email], { DATABASE_URL: t.url });
    expect(text.stdout.trim()).toBe(`${user.email} has no second factor: nothing removed, no session ended, no e-mail sent`);
    // No "every second factor was removed" mail for a removal that did not happen, no audit row, the session lives on.
    expect(await t.db.selectFrom('outbound_mail').select('subject').where('recipient', '=', user.email).execute()).toEqual([]);
    const audit = await t.db.selectFrom('audit_events').select('details').where('event', '=', 'second_factor.reset').execute();
    expect(audit.filter((row) => (row.details as { user_id?: string }).user_id === user.id)).toEqual([]);
    expect((await session.get('/account')).url.pathname).toBe('/account');
    const missing = await admin(['users', 'reset-second-factor', '--email', 'nobody@example.org']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no user/);
  });
});
