import crypto from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { formatEin } from '../../src/accounts/ein.js';
import { addUser } from '../../src/accounts/service.js';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { FormBrowser } from '../helpers/browser.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { inviteFromMembersPage, invitationMail } from '../helpers/invitations.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });

const NEW_PASSWORD = 'a long enough new password';
const fresh = (label: string) => `${label}-${crypto.randomBytes(4).toString('hex')}@example.org`;
const membership = (s: Staff, email: string) =>
  t.db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select(['memberships.role', 'users.id', 'users.password_hash', 'users.password_changed_at', 'users.display_name'])
    .where('memberships.organization_id', '=', s.orgId)
    .where('users.email', '=', email)
    .executeTakeFirst();
const countUsers = async (email: string) =>
  Number(
    (
      await t.db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('email', '=', email)
        .executeTakeFirstOrThrow()
    ).n,
  );
const anonymous = () => new FormBrowser(() => false);

/** An Owner's session that has sent one invitation; the link from the mail. */
async function invited(s: Staff, role: string, email = fresh('invitee'), as: keyof Staff['users'] = 'owner') {
  const session = await dashboardSession(server, 'production', s.users[as]);
  const answer = await inviteFromMembersPage(session, s.ein, email, role);
  expect(answer.status).toBe(200);
  return { session, email, answer, ...(await invitationMail(t.db, email)) };
}

describe('inviting from the members page', () => {
  it('an Owner invites an Admin: mail with a link to this dashboard, a pending row, the token stored only as its SHA-256', async () => {
    const s = await createStaff(t.db);
    const { answer, email, link, token, subject, body, session } = await invited(s, 'admin');
    expect(answer.url.pathname).toBe(`/orgs/${formatEin(s.ein)}/members`);
    expect(answer.html).toContain(`An invitation was sent to ${email}.`);
    expect(answer.html).toMatch(
      new RegExp(
        `<th scope="row" id="invitation-1">${email}</th>\\s*<td data-label="Role">Admin</td>\\s*<td data-label="Invited by">${s.users.owner.email}</td>`,
      ),
    );
    expect(link.startsWith(`${server.config.dashboard_url}/invitations/`)).toBe(true);
    expect(subject).toContain('invited you to join');
    expect(body).toContain('choose a password');
    const rows = await t.db.selectFrom('invitations').selectAll().where('organization_id', '=', s.orgId).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.token_hash).toBe(crypto.createHash('sha256').update(token).digest('hex'));
    expect(rows[0]!.expires_at.getTime() - Date.now()).toBeGreaterThan(71.9 * 3600_000);
    expect(rows[0]!.expires_at.getTime() - Date.now()).toBeLessThanOrEqual(72 * 3600_000);
    // Not the token in any form, anywhere in the database's invitation or audit rows.
    const audit = await t.db.selectFrom('audit_events').selectAll().where('organization_id', '=', s.orgId).execute();
    for (const form of [token, Buffer.from(token, 'base64url').toString('hex'), Buffer.from(token, 'base64url').toString('base64')])
      expect(JSON.stringify([rows, audit])).not.toContain(form);
    expect(audit.find((a) => a.event === 'invitation.created')).toMatchObject({
      actor_user_id: s.users.owner.id,
      environment: 'production',
      details: { email, role: 'admin', via: 'dashboard' },
    });
    // Inviting an address that is already a member: 409, shown on the page.
    const again = await inviteFromMembersPage(session, s.ein, s.users.member.email, 'admin');
    expect(again.status).toBe(409);
    expect(again.html).toContain(`The address ${s.users.member.email} is already a member`);
    // A malformed address: 400 on the page, the form keeps what was typed.
    const bad = await inviteFromMembersPage(session, s.ein, 'not-an-address', 'member');
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('is not an email address');
    expect(bad.html).toContain('value="not-an-address"');
  });

  it('an Admin cannot invite an Owner (no such option; a forged post is 403) and a Member cannot invite at all', async () => {
    const s = await createStaff(t.db);
    const admin = await dashboardSession(server, 'production', s.users.admin);
    const page = await admin.get(`/orgs/${s.ein}/members`);
    expect(page.html).toContain('Send invitation');
    expect(page.html).not.toContain('<option value="owner"');
    const owner = await admin.browser.submit(page, '/members/invite', { email: fresh('would-be-owner'), role: 'owner' });
    expect(owner.status).toBe(403);
    expect(owner.html).toContain('only an Owner can invite an Owner');
    for (const role of ['member', 'read_only'] as const) {
      const session = await dashboardSession(server, 'production', s.users[role]);
      const csrf = /name="csrf" value="([^"]+)"/.exec((await session.get('/account')).html)![1]!;
      const refused = await session.browser.request(`${session.origin}/orgs/${s.ein}/members/invite`, {
        method: 'POST',
        form: { csrf, email: fresh('by-member'), role: 'read_only' },
      });
      expect(refused.status).toBe(403);
    }
    expect(await t.db.selectFrom('invitations').select('id').where('organization_id', '=', s.orgId).execute()).toHaveLength(0);
    expect(await t.db.selectFrom('outbound_mail').select('id').where('recipient', 'like', 'would-be-owner-%').execute()).toHaveLength(0);
  });
});

describe('the hourly limit of invitations per organization', () => {
  it('a burst of 25 at once sends exactly 20; the others are 429 with Retry-After and send nothing; refused invitations do not count', async () => {
    const s = await createStaff(t.db);
    const session = await dashboardSession(server, 'production', s.users.owner);
    const page = await session.get(`/orgs/${s.ein}/members`);
    // A refused invitation (already a member) gives its attempt back.
    expect((await session.browser.submit(page, '/members/invite', { email: s.users.member.email, role: 'member' })).status).toBe(409);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)![1]!;
    const prefix = `burst-${crypto.randomBytes(3).toString('hex')}`;
    const answers = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        session.browser.request(`${session.origin}/orgs/${s.ein}/members/invite`, {
          method: 'POST',
          form: { csrf, email: `${prefix}-${i}@example.org`, role: 'member' },
        }),
      ),
    );
    expect(answers.filter((a) => a.status === 200 && a.html.includes('An invitation was sent to'))).toHaveLength(20);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused).toHaveLength(5);
    expect(refused[0]!.html).toContain('Too many invitations');
    expect(await t.db.selectFrom('invitations').select('id').where('organization_id', '=', s.orgId).execute()).toHaveLength(20);
    expect(await t.db.selectFrom('outbound_mail').select('id').where('recipient', 'like', `${prefix}-%`).execute()).toHaveLength(20);
    const retry = await fetch(`${session.origin}/orgs/${s.ein}/members/invite`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: session.browser.cookieHeader(new URL(session.origin)),
        'content-type': 'application/x-www-form-urlencoded',
        origin: session.origin,
        accept: 'text/html',
      },
      body: new URLSearchParams({ csrf, email: `${prefix}-late@example.org`, role: 'member' }).toString(),
    });
    expect(retry.status).toBe(429);
    expect(Number(retry.headers.get('retry-after'))).toBeGreaterThan(3000);
    // Another organization has its own allowance.
    const other = await createStaff(t.db);
    expect(
      (
        await inviteFromMembersPage(
          await dashboardSession(server, 'production', other.users.owner),
          other.ein,
          `${prefix}-other@example.org`,
          'member',
        )
      ).status,
    ).toBe(200);
  });
});

describe('accepting as a new user', () => {
  it('sets a password (policy errors are 400 on the page), is signed in and lands on the organization; the link then is 410', async () => {
    const s = await createStaff(t.db);
    const { email, link } = await invited(s, 'admin');
    const headers = await fetch(link, { headers: { accept: 'text/html' } });
    expect(headers.headers.get('referrer-policy')).toBe('no-referrer');
    expect(headers.headers.get('cache-control')).toBe('no-store');
    const browser = anonymous();
    const page = await browser.request(link);
    expect(page.status).toBe(200);
    expect(page.html).toMatch(/<h1>Join Nonprofit \w+<\/h1>/);
    expect(page.html).toContain(`value="${email}" readonly`);
    const short = await browser.submit(page, '/invitations/', { password: 'too short', password_repeat: 'too short' });
    expect(short.status).toBe(400);
    expect(short.html).toContain('Choose a password of at least 10 characters.');
    const common = await browser.submit(page, '/invitations/', { password: 'password1234', password_repeat: 'password1234' });
    expect(common.status).toBe(400);
    expect(common.html).toContain('list of common passwords');
    const mismatch = await browser.submit(page, '/invitations/', { password: NEW_PASSWORD, password_repeat: `${NEW_PASSWORD}!` });
    expect(mismatch.status).toBe(400);
    expect(mismatch.html).toContain('The two passwords are not the same');
    expect(await countUsers(email)).toBe(0);
    const late = anonymous();
    const latePage = await late.request(link);
    const landed = await browser.submit(page, '/invitations/', {
      password: NEW_PASSWORD,
      password_repeat: NEW_PASSWORD,
      name: 'Ada Invitee',
    });
    expect(landed.status).toBe(200);
    expect(landed.url.pathname).toBe(`/orgs/${formatEin(s.ein)}/members`);
    expect(landed.html).toContain(`Signed in as <strong>${email}</strong>`);
    const row = await membership(s, email);
    expect(row).toMatchObject({ role: 'admin', display_name: 'Ada Invitee' });
    expect(row!.password_hash).toMatch(/^\$argon2id\$/);
    expect(row!.password_changed_at).toBeInstanceOf(Date);
    const invitation = await t.db.selectFrom('invitations').selectAll().where('email', '=', email).executeTakeFirstOrThrow();
    expect(invitation.accepted_by).toBe(row!.id);
    const events = await t.db
      .selectFrom('audit_events')
      .select(['event', 'actor_user_id'])
      .where('organization_id', '=', s.orgId)
      .where('event', 'in', ['invitation.accepted', 'membership.added'])
      .execute();
    expect(events).toEqual(
      expect.arrayContaining([
        { event: 'invitation.accepted', actor_user_id: row!.id },
        { event: 'membership.added', actor_user_id: row!.id },
      ]),
    );
    // Single use: the link and a repeated submission are 410.
    const reopened = await anonymous().request(link);
    expect(reopened.status).toBe(410);
    expect(reopened.html).toContain('This invitation was already used');
    expect((await late.submit(latePage, '/invitations/', { password: NEW_PASSWORD, password_repeat: NEW_PASSWORD })).status).toBe(410);
    // The new password signs in.
    await dashboardSession(server, 'production', { email, password: NEW_PASSWORD });
  });

  it('a Member or Read-only invitee lands on their account page', async () => {
    const s = await createStaff(t.db);
    const { email, link } = await invited(s, 'read_only', fresh('reader'), 'admin');
    const browser = anonymous();
    const landed = await browser.submit(await browser.request(link), '/invitations/', {
      password: NEW_PASSWORD,
      password_repeat: NEW_PASSWORD,
    });
    expect(landed.url.pathname).toBe('/account');
    expect((await membership(s, email))?.role).toBe('read_only');
  });

  it('an invitee of an organization that requires a second factor lands on the Security page to set one up', async () => {
    const s = await createStaff(t.db);
    const { email, link } = await invited(s, 'admin');
    await t.db.updateTable('organizations').set({ require_mfa: true }).where('id', '=', s.orgId).execute();
    const browser = anonymous();
    const landed = await browser.submit(await browser.request(link), '/invitations/', {
      password: NEW_PASSWORD,
      password_repeat: NEW_PASSWORD,
    });
    expect(landed.url.pathname).toBe('/account/security');
    expect(landed.html).toContain(`Signed in as <strong>${email}</strong>`);
    expect((await membership(s, email))?.role).toBe('admin');
  });

  it('five simultaneous submissions of one link create one user and one membership', async () => {
    const s = await createStaff(t.db);
    const { email, link } = await invited(s, 'member');
    const browser = anonymous();
    const page = await browser.request(link);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)![1]!;
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        browser.request(link, { method: 'POST', form: { csrf, password: NEW_PASSWORD, password_repeat: NEW_PASSWORD } }),
      ),
    );
    expect(answers.filter((a) => a.url.pathname === '/account' && a.status === 200)).toHaveLength(1);
    // The others lost the race: the link is used (410), or the account they would create exists (sent to sign in).
    for (const a of answers.filter((x) => x.url.pathname !== '/account'))
      expect(a.status === 410 || a.url.pathname === '/sign-in').toBe(true);
    expect(await countUsers(email)).toBe(1);
    expect(
      await t.db
        .selectFrom('audit_events')
        .select('id')
        .where('organization_id', '=', s.orgId)
        .where('event', '=', 'invitation.accepted')
        .execute(),
    ).toHaveLength(1);
    expect(
      Number(
        (
          await t.db
            .selectFrom('memberships')
            .innerJoin('users', 'users.id', 'memberships.user_id')
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where('users.email', '=', email)
            .executeTakeFirstOrThrow()
        ).n,
      ),
    ).toBe(1);
  });
});

describe('accepting as an existing user', () => {
  it('sends them to sign in, back to "Join … as …", and Accept adds the membership', async () => {
    const s = await createStaff(t.db);
    const email = fresh('existing');
    await addUser(t.db, { email, password: NEW_PASSWORD }, MIN_PASSWORD_PARAMS);
    const { link, body } = await invited(s, 'member', email);
    expect(body).toContain('sign in with your Almoner account');
    const browser = anonymous();
    const signIn = await browser.request(link);
    expect(signIn.url.pathname).toBe('/sign-in');
    expect(signIn.url.searchParams.get('next')).toBe(new URL(link).pathname);
    expect(signIn.html).toContain('Sign in to accept your invitation');
    const join = await browser.submit(signIn, '/sign-in', { email, password: NEW_PASSWORD });
    expect(join.url.pathname).toBe(new URL(link).pathname);
    expect(join.html).toMatch(/<h1>Join Nonprofit \w+ as Member<\/h1>/);
    expect(await membership(s, email)).toBeUndefined();
    const accepted = await browser.submit(join, '/accept');
    expect(accepted.url.pathname).toBe('/account');
    expect((await membership(s, email))?.role).toBe('member');
    expect((await browser.request(link)).status).toBe(410);
  });

  it('someone else signed in sees whose address it is for (masked) and cannot accept it', async () => {
    const s = await createStaff(t.db);
    const email = fresh('target');
    await addUser(t.db, { email, password: NEW_PASSWORD }, MIN_PASSWORD_PARAMS);
    const { link } = await invited(s, 'admin', email);
    const other = await dashboardSession(server, 'production', (await createStaff(t.db)).users.member);
    const page = await other.browser.request(link);
    expect(page.status).toBe(403);
    expect(page.html).toContain('This invitation is for another account');
    expect(page.html).toContain(`t•••@example.org`);
    expect(page.html).not.toContain(email);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)![1]!;
    const forced = await other.browser.request(`${link}/accept`, { method: 'POST', form: { csrf } });
    expect(forced.status).toBe(403);
    expect(await membership(s, email)).toBeUndefined();
    // Its Sign out button comes back to the sign-in page that returns to the invitation.
    expect(page.html).toContain(`<input type="hidden" name="next" value="${new URL(link).pathname}">`);
    const signedOut = await other.browser.submit(page, '/oauth/logout', { next: new URL(link).pathname });
    expect(signedOut.url.pathname).toBe('/sign-in');
    expect(signedOut.url.searchParams.get('next')).toBe(new URL(link).pathname);
    const join = await other.browser.submit(signedOut, '/sign-in', { email, password: NEW_PASSWORD });
    expect(join.html).toMatch(/<h1>Join Nonprofit \w+ as Admin<\/h1>/);
  });
});

describe('links that no longer work', () => {
  it('revoked (from the members page), expired, replaced by a newer invitation, unknown or malformed', async () => {
    const s = await createStaff(t.db);
    const { session, email, link } = await invited(s, 'member');
    const page = await session.get(`/orgs/${s.ein}/members`);
    const revoked = await session.browser.submit(page, '/members/invitations/revoke');
    expect(revoked.html).toContain('The invitation was withdrawn');
    expect(revoked.html).toContain('No pending invitations.');
    const gone = await anonymous().request(link);
    expect(gone.status).toBe(410);
    expect(gone.html).toContain('This invitation was withdrawn');
    const audit = await t.db
      .selectFrom('audit_events')
      .selectAll()
      .where('organization_id', '=', s.orgId)
      .where('event', '=', 'invitation.revoked')
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ actor_user_id: s.users.owner.id, details: { email } });
    // Expired: 410, and the set-password form cannot be posted either.
    const second = await invited(s, 'member');
    const browser = anonymous();
    const form = await browser.request(second.link);
    await sql`update invitations set expires_at = now() - interval '1 second' where email = ${second.email}`.execute(t.db);
    const expired = await browser.request(second.link);
    expect(expired.status).toBe(410);
    expect(expired.html).toContain('This invitation has expired');
    expect((await browser.submit(form, '/invitations/', { password: NEW_PASSWORD, password_repeat: NEW_PASSWORD })).status).toBe(410);
    expect(await countUsers(second.email)).toBe(0);
    // Inviting the address again replaces the open invitation (even an expired one): the old link is 410, the new one works.
    const third = await invited(s, 'member', fresh('twice'));
    const replacement = await invited(s, 'admin', third.email);
    expect((await anonymous().request(third.link)).status).toBe(410);
    expect((await anonymous().request(replacement.link)).status).toBe(200);
    expect((await invited(s, 'member', second.email)).answer.status).toBe(200);
    // Unknown and malformed tokens: 404.
    expect((await anonymous().request(`${server.urls.dashboard}/invitations/${crypto.randomBytes(32).toString('base64url')}`)).status).toBe(
      404,
    );
    expect((await anonymous().request(`${server.urls.dashboard}/invitations/short`)).status).toBe(404);
    // On the other environment's dashboard the link is unknown.
    expect((await anonymous().request(`${server.urls.sandboxDashboard}${new URL(replacement.link).pathname}`)).status).toBe(404);
  });

  it("revoking another organization's invitation, or a malformed id, is 404 and changes nothing", async () => {
    const s = await createStaff(t.db);
    const other = await createStaff(t.db);
    const theirs = await invited(other, 'member');
    const session = await dashboardSession(server, 'production', s.users.owner);
    const csrf = /name="csrf" value="([^"]+)"/.exec((await session.get(`/orgs/${s.ein}/members`)).html)![1]!;
    const id = (await t.db.selectFrom('invitations').select('id').where('email', '=', theirs.email).executeTakeFirstOrThrow()).id;
    for (const invitation of [id, 'not-a-uuid']) {
      const answer = await session.browser.request(`${session.origin}/orgs/${s.ein}/members/invitations/revoke`, {
        method: 'POST',
        form: { csrf, invitation },
      });
      expect(answer.status).toBe(404);
    }
    expect((await anonymous().request(theirs.link)).status).toBe(200);
  });

  it('an Admin cannot revoke an invitation to become Owner (403)', async () => {
    const s = await createStaff(t.db);
    const { email } = await invited(s, 'owner');
    const admin = await dashboardSession(server, 'production', s.users.admin);
    const page = await admin.get(`/orgs/${s.ein}/members`);
    expect(page.html).toContain(email);
    expect(page.html).not.toContain('/members/invitations/revoke');
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)![1]!;
    const id = (await t.db.selectFrom('invitations').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id;
    const refused = await admin.browser.request(`${admin.origin}/orgs/${s.ein}/members/invitations/revoke`, {
      method: 'POST',
      form: { csrf, invitation: id },
    });
    expect(refused.status).toBe(403);
    expect(
      (await t.db.selectFrom('invitations').select('revoked_at').where('id', '=', id).executeTakeFirstOrThrow()).revoked_at,
    ).toBeNull();
  });
});
