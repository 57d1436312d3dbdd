import { describe, expect, it } from 'vitest';
import { addMember } from '../../src/accounts/memberships.js';
import { addUser } from '../../src/accounts/service.js';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { obtainTokens, tokenRequest } from '../helpers/flow.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });

const roleOf = async (s: Staff, userId: string) =>
  (
    await t.db
      .selectFrom('memberships')
      .select('role')
      .where('organization_id', '=', s.orgId)
      .where('user_id', '=', userId)
      .executeTakeFirst()
  )?.role;

/** The hidden fields and action of the role form of one member's row. */
async function changeRole(session: Awaited<ReturnType<typeof dashboardSession>>, s: Staff, userId: string, role: string) {
  const page = await session.get(`/orgs/${s.ein}/members`);
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)![1]!;
  return session.browser.request(`${session.origin}/orgs/${s.ein}/members/role`, { method: 'POST', form: { csrf, user: userId, role } });
}

describe('the members page', () => {
  it('lets an Owner change any role (audited with who made it) and remove a member, whose tokens end at once', async () => {
    const s = await createStaff(t.db);
    const client = await server.registerClient({ environment: 'production' });
    const { tokens } = await obtainTokens(server, {
      environment: 'production',
      client,
      clientId: client.client_id,
      redirectUri: 'https://app.example.org/callback',
      scope: 'read_only',
      login: s.users.member,
    });
    const session = await dashboardSession(server, 'production', s.users.owner);
    const changed = await changeRole(session, s, s.users.member.id, 'admin');
    expect(changed.status).toBe(200);
    expect(changed.html).toContain(`${s.users.member.email} is now Admin.`);
    expect(await roleOf(s, s.users.member.id)).toBe('admin');
    const audit = await t.db
      .selectFrom('audit_events')
      .selectAll()
      .where('event', '=', 'membership.role_changed')
      .where('organization_id', '=', s.orgId)
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({
      actor_user_id: s.users.owner.id,
      details: { user_id: s.users.member.id, role: 'admin', previous_role: 'member' },
    });
    // Removing the member ends what they approved, at once.
    const removal = await session.get(`/orgs/${s.ein}/members/${s.users.member.id}/remove`);
    expect(removal.html).toContain('1 connected application acting as them');
    const removed = await session.browser.submit(removal, '/members/remove');
    expect(removed.html).toContain('The member was removed.');
    expect(await roleOf(s, s.users.member.id)).toBeUndefined();
    const refresh = await tokenRequest(server, 'production', client, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token as string,
    });
    expect(refresh.status).toBe(401);
  });

  it('keeps an Admin away from Owners: no Owner role to give, and a forged post is 403 with nothing changed', async () => {
    const s = await createStaff(t.db);
    const session = await dashboardSession(server, 'production', s.users.admin);
    const page = await session.get(`/orgs/${s.ein}/members`);
    expect(page.html).not.toContain('<option value="owner"');
    expect(page.html).not.toContain(`/members/${s.users.owner.id}/remove`);
    for (const [user, role] of [
      [s.users.member.id, 'owner'],
      [s.users.owner.id, 'member'],
    ] as const) {
      const refused = await changeRole(session, s, user, role);
      expect(refused.status).toBe(403);
      expect(refused.html).toContain('You cannot make this change');
    }
    expect(await roleOf(s, s.users.member.id)).toBe('member');
    expect(await roleOf(s, s.users.owner.id)).toBe('owner');
    expect((await session.get(`/orgs/${s.ein}/members/${s.users.owner.id}/remove`)).status).toBe(403);
    // An Admin may still manage Admins, Members and Read-only users.
    expect((await changeRole(session, s, s.users.read_only.id, 'member')).status).toBe(200);
    expect(await roleOf(s, s.users.read_only.id)).toBe('member');
  });

  it('answers a Member or Read-only user 403 on every form, changing nothing', async () => {
    const s = await createStaff(t.db);
    for (const role of ['member', 'read_only'] as const) {
      const session = await dashboardSession(server, 'production', s.users[role]);
      const account = await session.get('/account');
      const csrf = /name="csrf" value="([^"]+)"/.exec(account.html)![1]!;
      const role403 = await session.browser.request(`${session.origin}/orgs/${s.ein}/members/role`, {
        method: 'POST',
        form: { csrf, user: s.users.admin.id, role: 'read_only' },
      });
      const remove403 = await session.browser.request(`${session.origin}/orgs/${s.ein}/members/remove`, {
        method: 'POST',
        form: { csrf, user: s.users.admin.id },
      });
      expect([role403.status, remove403.status]).toEqual([403, 403]);
    }
    expect(await roleOf(s, s.users.admin.id)).toBe('admin');
  });

  it('never leaves an organization without an Owner: the only Owner cannot be demoted or removed', async () => {
    const s = await createStaff(t.db);
    const session = await dashboardSession(server, 'production', s.users.owner);
    const demoted = await changeRole(session, s, s.users.owner.id, 'admin');
    expect(demoted.status).toBe(409);
    expect(demoted.html).toContain('is the organization&#39;s only Owner');
    // The confirmation page offers no Remove for the only Owner; the form posted anyway is refused.
    const removal = await session.get(`/orgs/${s.ein}/members/${s.users.owner.id}/remove`);
    expect(removal.status).toBe(409);
    expect(removal.html).not.toContain('action="/orgs/');
    const csrf = /name="csrf" value="([^"]+)"/.exec(removal.html)![1]!;
    expect(
      (
        await session.browser.request(`${session.origin}/orgs/${s.ein}/members/remove`, {
          method: 'POST',
          form: { csrf, user: s.users.owner.id },
        })
      ).status,
    ).toBe(409);
    expect(await roleOf(s, s.users.owner.id)).toBe('owner');
    // With a second Owner, the first may step down.
    const second = await addUser(
      t.db,
      { email: `second-owner-${s.ein}@example.org`, password: 'second-owner-password' },
      MIN_PASSWORD_PARAMS,
    );
    await addMember(t.db, { org: s.ein, email: second.email, role: 'owner' });
    expect((await changeRole(session, s, s.users.owner.id, 'admin')).status).toBe(200);
    expect(await roleOf(s, s.users.owner.id)).toBe('admin');
  });

  it('does not offer the only Owner a role change or Remove, and says why; with two Owners both are offered', async () => {
    const s = await createStaff(t.db);
    const session = await dashboardSession(server, 'production', s.users.owner);
    const page = await session.get(`/orgs/${s.ein}/members`);
    const rowOf = (html: string, email: string) =>
      [...html.matchAll(/<tr>\s*<th scope="row"[\s\S]*?<\/tr>/g)].map((m) => m[0]).find((row) => row.includes(`>${email}`))!;
    const ownerRow = rowOf(page.html, s.users.owner.email);
    expect(ownerRow).toContain('the only Owner; make someone else Owner first');
    expect(ownerRow).not.toContain('<select');
    expect(ownerRow).not.toContain('Remove…');
    // The others are offered as before.
    const memberRow = rowOf(page.html, s.users.member.email);
    expect(memberRow).toContain('Change role');
    expect(memberRow).toContain('Remove…');
    // An Admin, who may not touch Owners at all, is not told to make someone Owner.
    const admin = await dashboardSession(server, 'production', s.users.admin);
    expect((await admin.get(`/orgs/${s.ein}/members`)).html).not.toContain('the only Owner');
    await changeRole(session, s, s.users.admin.id, 'owner');
    const twoOwners = await session.get(`/orgs/${s.ein}/members`);
    expect(twoOwners.html).not.toContain('the only Owner');
    expect(twoOwners.html).toContain(`/members/${s.users.owner.id}/remove`);
    expect(twoOwners.html).toContain(`/members/${s.users.admin.id}/remove`);
  });

  it('answers a member of another organization, or a malformed id, 404', async () => {
    const s = await createStaff(t.db);
    const other = await createStaff(t.db);
    const session = await dashboardSession(server, 'production', s.users.owner);
    expect((await changeRole(session, s, other.users.member.id, 'admin')).status).toBe(404);
    expect((await changeRole(session, s, 'not-a-uuid', 'admin')).status).toBe(404);
    expect((await session.get(`/orgs/${s.ein}/members/${other.users.member.id}/remove`)).status).toBe(404);
    expect(await roleOf(other, other.users.member.id)).toBe('member');
  });
});
