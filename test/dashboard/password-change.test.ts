import { beforeEach, describe, expect, it } from 'vitest';
import { dashboardSession } from '../helpers/dashboard.js';
import { obtainTokens, tokenRequest } from '../helpers/flow.js';
import { clearAttemptCounters } from '../helpers/password-reset.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Changing one's own password on the account page (docs/accounts.md, "Changing your
 * password"): the current password, the new one twice, the other sessions signed out.
 */
const REDIRECT = 'https://app.example.org/callback';
const {
  testDatabase: t,
  server,
  clients: { app, orgApp },
} = useOAuthServer({
  staff: 0,
  clients: {
    app: { environment: 'production', redirectUris: [REDIRECT] },
    orgApp: { environment: 'sandbox', redirectUris: [REDIRECT], scopes: ['read_only'], subjectType: 'organization' },
  },
});

beforeEach(() => clearAttemptCounters(t.db));

const NEW_PASSWORD = 'a brand new passphrase';

type Session = Awaited<ReturnType<typeof dashboardSession>>;

async function changePassword(session: Session, fields: { current: string; password: string; confirmation?: string }) {
  const page = await session.get('/account/password');
  return session.browser.submit(page, '/account/password', {
    current: fields.current,
    password: fields.password,
    confirmation: fields.confirmation ?? fields.password,
  });
}

describe('changing your password', () => {
  it('signs the user out of the applications they connected when asked: their refresh fails, the consent and the organization’s own access stay', async () => {
    const s = await createStaff(t.db);
    const user = s.users.owner;
    const mine = await obtainTokens(server, {
      environment: 'production',
      client: app,
      clientId: app.client_id,
      redirectUri: REDIRECT,
      scope: 'openid read_only',
      login: user,
    });
    const theirs = await obtainTokens(server, {
      environment: 'sandbox',
      client: orgApp,
      clientId: orgApp.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only',
      login: user,
    });
    const session = await dashboardSession(server, 'production', user);
    const page = await session.get('/account/password');
    expect(page.html).toContain('Also sign out of the applications I connected');
    const done = await session.browser.submit(page, '/account/password', {
      current: user.password,
      password: NEW_PASSWORD,
      confirmation: NEW_PASSWORD,
      sign_out_apps: 'on',
    });
    expect(done.html).toContain('Your password was changed.');
    expect(
      (
        await tokenRequest(server, 'production', app, {
          grant_type: 'refresh_token',
          refresh_token: mine.tokens.body.refresh_token as string,
        })
      ).status,
    ).toBe(401);
    expect(
      (
        await tokenRequest(server, 'sandbox', orgApp, {
          grant_type: 'refresh_token',
          refresh_token: theirs.tokens.body.refresh_token as string,
        })
      ).status,
    ).toBe(200);
    expect(
      await t.db
        .selectFrom('oauth_authorizations')
        .select('revoked_at')
        .where('user_id', '=', user.id)
        .where('client_id', '=', app.client_id)
        .executeTakeFirstOrThrow(),
    ).toEqual({ revoked_at: null });
    const audit = await t.db
      .selectFrom('audit_events')
      .select('details')
      .where('event', '=', 'user.password_changed')
      .where('actor_user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(audit.details).toMatchObject({ applications_signed_out: 1 });
    // Without the box, applications keep their tokens (the next test's default).
    const again = await obtainTokens(server, {
      environment: 'production',
      client: app,
      clientId: app.client_id,
      redirectUri: REDIRECT,
      scope: 'openid read_only',
      login: { email: user.email, password: NEW_PASSWORD },
    });
    await changePassword(session, { current: NEW_PASSWORD, password: `${NEW_PASSWORD} two` });
    expect(
      (
        await tokenRequest(server, 'production', app, {
          grant_type: 'refresh_token',
          refresh_token: again.tokens.body.refresh_token as string,
        })
      ).status,
    ).toBe(200);
  });

  it('is linked from the account page; keeps this session, ends the others on both dashboards, and is audited and notified', async () => {
    const s = await createStaff(t.db);
    const user = s.users.read_only;
    const here = await dashboardSession(server, 'production', user);
    const elsewhere = await dashboardSession(server, 'production', user);
    const sandbox = await dashboardSession(server, 'sandbox', user);
    const account = await here.get('/account');
    expect(account.html).toContain('<a href="/account/password">Change your password</a>');

    const changed = await changePassword(here, { current: user.password, password: NEW_PASSWORD });
    expect(changed.status).toBe(200);
    expect(changed.html).toContain('Your password was changed. 2 other sessions were signed out; this one stays signed in.');
    expect((await here.get('/account')).url.pathname).toBe('/account');
    expect((await elsewhere.get('/account')).url.pathname).toBe('/sign-in');
    expect((await sandbox.get('/account')).url.pathname).toBe('/sign-in');

    await expect(dashboardSession(server, 'production', user)).rejects.toThrow(/401/);
    await dashboardSession(server, 'sandbox', { email: user.email, password: NEW_PASSWORD });

    const audit = await t.db
      .selectFrom('audit_events')
      .selectAll()
      .where('event', '=', 'user.password_changed')
      .where('actor_user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ environment: 'production', details: { user_id: user.id, via: 'account_page', sessions_ended: 2 } });
    expect(
      (await t.db.selectFrom('users').select('password_changed_at').where('id', '=', user.id).executeTakeFirstOrThrow())
        .password_changed_at,
    ).not.toBeNull();
    await server.runtime.background.drain();
    const notice = await t.db
      .selectFrom('outbound_mail')
      .selectAll()
      .where('recipient', '=', user.email)
      .where('subject', '=', 'Your Almoner password was changed')
      .executeTakeFirstOrThrow();
    expect(notice.body).toContain('changed from your account page');
  });

  it('refuses a wrong current password, a mismatch, a common or too short password, and the same password, changing nothing', async () => {
    const s = await createStaff(t.db);
    const user = s.users.member;
    const session = await dashboardSession(server, 'production', user);
    const before = (await t.db.selectFrom('users').select('password_hash').where('id', '=', user.id).executeTakeFirstOrThrow())
      .password_hash;
    const cases = [
      [{ current: 'not my password', password: NEW_PASSWORD }, 'Your current password is not right.'],
      [{ current: user.password, password: NEW_PASSWORD, confirmation: 'something else entirely' }, 'The two new passwords differ'],
      [{ current: user.password, password: 'qwertyuiop' }, 'list of common passwords'],
      [{ current: user.password, password: 'tiny' }, 'at least 10 characters'],
      [{ current: user.password, password: user.email }, 'not your e-mail address'],
      [{ current: user.password, password: user.password }, 'differs from your current one'],
    ] as const;
    for (const [fields, message] of cases) {
      const refused = await changePassword(session, fields);
      expect(refused.status, message).toBe(400);
      expect(refused.html).toContain(message);
    }
    expect((await t.db.selectFrom('users').select('password_hash').where('id', '=', user.id).executeTakeFirstOrThrow()).password_hash).toBe(
      before,
    );
    expect((await session.get('/account')).url.pathname).toBe('/account');
  });

  it('throttles wrong current passwords per user: a concurrent burst gets 5 checks, the rest 429, the right one included', async () => {
    const s = await createStaff(t.db);
    const user = s.users.admin;
    const session = await dashboardSession(server, 'production', user);
    const page = await session.get('/account/password');
    const burst = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        session.browser.submit(page, '/account/password', {
          current: `wrong guess ${i}`,
          password: NEW_PASSWORD,
          confirmation: NEW_PASSWORD,
        }),
      ),
    );
    const statuses = burst.map((r) => r.status).sort();
    expect(statuses.filter((x) => x === 400)).toHaveLength(5);
    expect(statuses.filter((x) => x === 429)).toHaveLength(7);
    expect(burst.find((r) => r.status === 429)!.html).toContain('Too many wrong current passwords');
    const right = await changePassword(session, { current: user.password, password: NEW_PASSWORD });
    expect(right.status).toBe(429);
  });

  it('sends a visitor without a session to sign in, and changes nothing for a post without one', async () => {
    const page = await fetch(`${server.urls.dashboard}/account/password`, { redirect: 'manual' });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/sign-in?next=%2Faccount%2Fpassword');
  });
});
