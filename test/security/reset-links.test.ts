import { beforeEach, describe, expect, it } from 'vitest';
import { FormBrowser } from '../helpers/browser.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { askForReset, clearAttemptCounters, resetLinksFor, sha256 } from '../helpers/password-reset.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * docs/security.md, "Password reset": a link works once and for 30 minutes; of concurrent
 * submissions of one link exactly one sets a password; the forms refuse posts without their
 * CSRF token or from another site.
 */
const { testDatabase: t, server } = useOAuthServer({ staff: 0 });

beforeEach(() => clearAttemptCounters(t.db));

async function freshLink(email: string) {
  await askForReset(server.urls.dashboard, email);
  return (await resetLinksFor(server, t.db, email)).at(-1)!;
}

describe('password reset links', () => {
  it('refuses a used link (410), for GET and POST alike', async () => {
    const s = await createStaff(t.db);
    const link = await freshLink(s.users.owner.email);
    const browser = new FormBrowser(() => false);
    const form = await browser.request(link);
    expect(
      (await browser.submit(form, '/reset-password/', { password: 'first new passphrase', confirmation: 'first new passphrase' })).status,
    ).toBe(200);
    expect((await browser.request(link)).status).toBe(410);
    const replay = await browser.submit(form, '/reset-password/', {
      password: 'second new passphrase',
      confirmation: 'second new passphrase',
    });
    expect(replay.status).toBe(410);
    await dashboardSession(server, 'production', { email: s.users.owner.email, password: 'first new passphrase' });
  });

  it('refuses an expired link (410) and changes nothing', async () => {
    const s = await createStaff(t.db);
    const link = await freshLink(s.users.admin.email);
    const browser = new FormBrowser(() => false);
    const form = await browser.request(link);
    expect(form.status).toBe(200);
    await t.db
      .updateTable('password_resets')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('token_hash', '=', sha256(link.split('/').at(-1)!))
      .execute();
    expect((await browser.request(link)).status).toBe(410);
    const late = await browser.submit(form, '/reset-password/', { password: 'too late passphrase', confirmation: 'too late passphrase' });
    expect(late.status).toBe(410);
    expect(late.html).toContain('more than 30 minutes have passed');
    await dashboardSession(server, 'production', s.users.admin);
  });

  it('lets exactly one of a burst of concurrent submissions of one link set the password', async () => {
    const s = await createStaff(t.db);
    const link = await freshLink(s.users.member.email);
    const browser = new FormBrowser(() => false);
    const form = await browser.request(link);
    const passwords = Array.from({ length: 8 }, (_, i) => `burst passphrase number ${i}`);
    const answers = await Promise.all(
      passwords.map((password) => browser.submit(form, '/reset-password/', { password, confirmation: password })),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((x) => x === 200)).toHaveLength(1);
    expect(statuses.filter((x) => x === 410)).toHaveLength(7);
    const winner = passwords[statuses.indexOf(200)]!;
    await dashboardSession(server, 'production', { email: s.users.member.email, password: winner });
    expect(
      await t.db
        .selectFrom('audit_events')
        .select('id')
        .where('event', '=', 'user.password_reset')
        .where('actor_user_id', '=', s.users.member.id)
        .execute(),
    ).toHaveLength(1);
  });

  it('refuses posts without the CSRF token or from another site on /forgot-password, /reset-password/:token and /account/password', async () => {
    const s = await createStaff(t.db);
    const link = await freshLink(s.users.read_only.email);
    const mailsBefore = await t.db.selectFrom('outbound_mail').select('id').where('recipient', '=', s.users.read_only.email).execute();
    const session = await dashboardSession(server, 'production', s.users.read_only);
    const pages: { page: { url: URL; html: string }; action: string; fields: Record<string, string> }[] = [
      { page: await session.get('/forgot-password'), action: '/forgot-password', fields: { email: s.users.read_only.email } },
      {
        page: await session.browser.request(link),
        action: '/reset-password/',
        fields: { password: 'forged passphrase!', confirmation: 'forged passphrase!' },
      },
      {
        page: await session.get('/account/password'),
        action: '/account/password',
        fields: { current: s.users.read_only.password, password: 'forged passphrase!', confirmation: 'forged passphrase!' },
      },
    ];
    for (const { page, action, fields } of pages) {
      const url = new URL(
        /<form method="post" action="([^"]+)"/.exec(page.html.slice(page.html.indexOf(`action="${action}`) - 40))![1]!,
        page.url,
      );
      const cookie = session.browser.cookieHeader(url);
      const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)![1]!;
      const post = (headers: Record<string, string>, form: Record<string, string>) =>
        fetch(url, {
          method: 'POST',
          redirect: 'manual',
          headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
          body: new URLSearchParams(form).toString(),
        });
      expect((await post({ origin: url.origin }, fields)).status, `${action} without a token`).toBe(403);
      expect(
        (await post({ origin: url.origin }, { ...fields, csrf: `${csrf.slice(0, -2)}xx` })).status,
        `${action} with a wrong token`,
      ).toBe(403);
      expect(
        (await post({ origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }, { ...fields, csrf })).status,
        `${action} from another site`,
      ).toBe(403);
    }
    // Nothing happened: no new mail, the link unused, the password unchanged.
    await server.runtime.background.drain();
    expect(await t.db.selectFrom('outbound_mail').select('id').where('recipient', '=', s.users.read_only.email).execute()).toHaveLength(
      mailsBefore.length,
    );
    expect((await fetch(link)).status).toBe(200);
    expect((await session.get('/account')).url.pathname).toBe('/account');
    await dashboardSession(server, 'sandbox', s.users.read_only);
  });
});
