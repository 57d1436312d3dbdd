import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { addUser } from '../../src/accounts/service.js';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { FormBrowser } from '../helpers/browser.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { inviteFromMembersPage, invitationMail } from '../helpers/invitations.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * CSRF on the invitation forms (docs/accounts.md, "Invitations"; docs/security.md): inviting and
 * revoking (bound to the session), setting a password (bound to the sign-in nonce cookie, as
 * there is no session yet) and accepting (bound to the session). A token that is missing,
 * forged, or rendered for another browser is 403 and changes nothing; so is a post a browser
 * marks as cross-site, even with a good token.
 */
const { testDatabase: t, server } = useOAuthServer({ staff: 0 });

const PASSWORD = 'a long enough new password';
const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;
const fresh = (label: string) => `${label}-${crypto.randomBytes(4).toString('hex')}@example.org`;
const invitationCount = async (orgId: string) =>
  (await t.db.selectFrom('invitations').select('id').where('organization_id', '=', orgId).execute()).length;

/** A post with the session's cookies, a chosen token, and the headers a cross-site form would carry when `crossSite`. */
async function post(browser: FormBrowser, url: string, form: Record<string, string>, crossSite = false) {
  if (!crossSite) return browser.request(url, { method: 'POST', form });
  const response = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      cookie: browser.cookieHeader(new URL(url)),
      'content-type': 'application/x-www-form-urlencoded',
      origin: 'https://evil.example',
      'sec-fetch-site': 'cross-site',
      accept: 'text/html',
    },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, html: await response.text() };
}

describe('CSRF on the invitation forms', () => {
  it('the invite and revoke forms of the members page refuse a missing, forged, other-session or cross-site token', async () => {
    const s = await createStaff(t.db);
    const owner = await dashboardSession(server, 'production', s.users.owner);
    const otherOwner = await dashboardSession(server, 'production', s.users.owner);
    const theirs = csrfOf((await otherOwner.get(`/orgs/${s.ein}/members`)).html);
    const mine = csrfOf((await owner.get(`/orgs/${s.ein}/members`)).html);
    const inviteUrl = `${owner.origin}/orgs/${s.ein}/members/invite`;
    for (const [csrf, crossSite] of [
      [undefined, false],
      ['forged.token', false],
      [theirs, false],
      [mine, true],
    ] as const) {
      const answer = await post(owner.browser, inviteUrl, { ...(csrf ? { csrf } : {}), email: fresh('csrf'), role: 'member' }, crossSite);
      expect(answer.status).toBe(403);
    }
    expect(await invitationCount(s.orgId)).toBe(0);
    // With its own token the same form works, then revoking is held to the same rule.
    expect((await inviteFromMembersPage(owner, s.ein, fresh('real'), 'member')).status).toBe(200);
    const id = (await t.db.selectFrom('invitations').select('id').where('organization_id', '=', s.orgId).executeTakeFirstOrThrow()).id;
    const revokeUrl = `${owner.origin}/orgs/${s.ein}/members/invitations/revoke`;
    for (const [csrf, crossSite] of [
      [undefined, false],
      ['forged.token', false],
      [theirs, false],
      [mine, true],
    ] as const) {
      expect((await post(owner.browser, revokeUrl, { ...(csrf ? { csrf } : {}), invitation: id }, crossSite)).status).toBe(403);
    }
    expect(
      (await t.db.selectFrom('invitations').select('revoked_at').where('id', '=', id).executeTakeFirstOrThrow()).revoked_at,
    ).toBeNull();
  });

  it('the set-password form refuses a token without its nonce cookie, a forged one and a cross-site post', async () => {
    const s = await createStaff(t.db);
    const owner = await dashboardSession(server, 'production', s.users.owner);
    const email = fresh('newcomer');
    await inviteFromMembersPage(owner, s.ein, email, 'member');
    const { link } = await invitationMail(t.db, email);
    const browser = new FormBrowser(() => false);
    const good = csrfOf((await browser.request(link)).html);
    const fields = { password: PASSWORD, password_repeat: PASSWORD };
    // Another browser (no nonce cookie) with this page's token; this browser with a forged token; a cross-site post.
    expect((await post(new FormBrowser(() => false), link, { csrf: good, ...fields })).status).toBe(403);
    expect((await post(browser, link, { csrf: 'forged.token', ...fields })).status).toBe(403);
    expect((await post(browser, link, { ...fields })).status).toBe(403);
    expect((await post(browser, link, { csrf: good, ...fields }, true)).status).toBe(403);
    expect(await t.db.selectFrom('users').select('id').where('email', '=', email).execute()).toHaveLength(0);
    // The page's own token, in its own browser, works.
    expect((await post(browser, link, { csrf: good, ...fields })).status).toBe(200);
    expect(await t.db.selectFrom('users').select('id').where('email', '=', email).execute()).toHaveLength(1);
  });

  it('the Accept form refuses a token of another session and a cross-site post', async () => {
    const s = await createStaff(t.db);
    const email = fresh('existing');
    await addUser(t.db, { email, password: PASSWORD }, MIN_PASSWORD_PARAMS);
    await inviteFromMembersPage(await dashboardSession(server, 'production', s.users.owner), s.ein, email, 'member');
    const { link } = await invitationMail(t.db, email);
    const invitee = await dashboardSession(server, 'production', { email, password: PASSWORD });
    const elsewhere = await dashboardSession(server, 'production', { email, password: PASSWORD });
    const page = await invitee.browser.request(link);
    const mine = csrfOf(page.html);
    const theirs = csrfOf((await elsewhere.browser.request(link)).html);
    for (const [csrf, crossSite] of [
      [undefined, false],
      ['forged.token', false],
      [theirs, false],
      [mine, true],
    ] as const) {
      expect((await post(invitee.browser, `${link}/accept`, csrf ? { csrf } : { accept: '1' }, crossSite)).status).toBe(403);
    }
    expect(
      await t.db
        .selectFrom('memberships')
        .innerJoin('users', 'users.id', 'memberships.user_id')
        .select('users.id')
        .where('users.email', '=', email)
        .execute(),
    ).toHaveLength(0);
    expect((await invitee.browser.submit(page, '/accept')).url.pathname).toBe('/account');
  });
});
