import crypto from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { runAdmin } from '../helpers/admin-cli.js';
import { TEST_SECRETS_KEY } from '../helpers/app.js';
import { FormBrowser } from '../helpers/browser.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { inviteFromMembersPage, invitationMail } from '../helpers/invitations.js';
import { createStaff } from '../helpers/oauth-server.js';
import { clearAttemptCounters } from '../helpers/password-reset.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * The account's own address as its password (docs/security.md, "Passwords"): the first guess
 * of anyone who knows the address. The policy refused it as typed, but not with a trailing
 * space, in capitals with a space, padded with a tab, or with an invisible code point (U+200B)
 * in it: each is the same guess. Mounted on every form and command that sets a password.
 */
const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
beforeEach(() => clearAttemptCounters(t.db));
const REFUSED = 'Choose a password that is not your e-mail address.';
const variants = (email: string) => [
  `${email} `,
  ` ${email.toUpperCase()} `,
  `\t${email}`,
  `${email.slice(0, email.indexOf('@'))} `,
  // Invisible code points (Unicode Default_Ignorable_Code_Point): a zero-width space inside, a soft hyphen and a word joiner.
  `${email.slice(0, 3)}\u200B${email.slice(3)}`,
  `\u2060${email}\u00AD`,
];

describe('a password that is the address', () => {
  it('is refused, whatever its case and white space, on the invitation, the account page and by the CLI', async () => {
    const s = await createStaff(t.db);
    const owner = await dashboardSession(server, 'production', s.users.owner);

    // Someone new choosing their first password from an invitation's link.
    const invitee = `newcomer-${crypto.randomBytes(3).toString('hex')}@example.org`;
    expect((await inviteFromMembersPage(owner, s.ein, invitee, 'member')).status).toBe(200);
    const { link } = await invitationMail(t.db, invitee);
    const browser = new FormBrowser(() => false);
    const page = await browser.request(link);
    for (const password of variants(invitee)) {
      const refused = await browser.submit(page, '/invitations/', { password, password_repeat: password });
      expect(refused.status, JSON.stringify(password)).toBe(400);
      expect(refused.html).toContain(REFUSED);
    }
    expect(await t.db.selectFrom('users').select('id').where('email', '=', invitee).execute()).toEqual([]);

    // A signed-in user changing theirs.
    const user = s.users.member;
    const session = await dashboardSession(server, 'production', user);
    for (const password of variants(user.email)) {
      const form = await session.get('/account/password');
      const refused = await session.browser.submit(form, '/account/password', { current: user.password, password, confirmation: password });
      expect(refused.status, JSON.stringify(password)).toBe(400);
      expect(refused.html).toContain(REFUSED);
    }
    const stored = await t.db.selectFrom('users').select('password_changed_at').where('id', '=', user.id).executeTakeFirstOrThrow();
    expect(stored.password_changed_at).toBeNull();

    // The maker's CLI, adding a user and resetting one.
    const env = { DATABASE_URL: t.url, ALMONER_SECRETS_KEY: TEST_SECRETS_KEY };
    const added = `added-${crypto.randomBytes(3).toString('hex')}@example.org`;
    for (const password of variants(added)) {
      const run = await runAdmin(['users', 'add', '--email', added, '--password-stdin'], env, `${password}\n`);
      expect(run.code, JSON.stringify(password)).not.toBe(0);
      expect(run.stderr).toContain(REFUSED);
    }
    const reset = await runAdmin(
      ['users', 'reset-password', '--email', user.email, '--password-stdin'],
      env,
      `${user.email.toUpperCase()} \n`,
    );
    expect(reset.code).not.toBe(0);
    expect(reset.stderr).toContain(REFUSED);
  });
});
