import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { findInvitation } from '../../src/accounts/invitations.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { inviteFromMembersPage, invitationMail } from '../helpers/invitations.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Withdrawing an Owner's invitation by inviting the address again (docs/security.md,
 * "Withdrawing an invitation by inviting again"): inviting an address replaces its open
 * invitation, so an Admin, who may not revoke an invitation to become Owner, could withdraw one
 * by inviting the same address as a Member. Replacing needs the right to revoke.
 */
const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const fresh = (label: string) => `${label}-${crypto.randomBytes(4).toString('hex')}@example.org`;
const invitationsOf = (orgId: string, email: string) =>
  t.db
    .selectFrom('invitations')
    .select(['id', 'role', 'revoked_at'])
    .where('organization_id', '=', orgId)
    .where('email', '=', email)
    .orderBy('created_at')
    .execute();
const mailsTo = async (email: string) =>
  (await t.db.selectFrom('outbound_mail').select('id').where('recipient', '=', email).execute()).length;

describe('replacing an invitation', () => {
  it('an Admin cannot withdraw an Owner’s invitation by inviting the address again with a lower role (403, the link still works)', async () => {
    const s = await createStaff(t.db);
    const email = fresh('future-owner');
    const owner = await dashboardSession(server, 'production', s.users.owner);
    expect((await inviteFromMembersPage(owner, s.ein, email, 'owner')).status).toBe(200);
    const { token } = await invitationMail(t.db, email);
    const [ownersInvitation] = await invitationsOf(s.orgId, email);

    const admin = await dashboardSession(server, 'production', s.users.admin);
    for (const role of ['member', 'read_only', 'admin']) {
      const replaced = await inviteFromMembersPage(admin, s.ein, email, role);
      expect(replaced.status, role).toBe(403);
      expect(replaced.html).toContain('invitation to become Owner');
    }
    // Nothing changed: the Owner's invitation is the only one, open, its link good; no mail, no audit row.
    expect(await invitationsOf(s.orgId, email)).toEqual([{ id: ownersInvitation!.id, role: 'owner', revoked_at: null }]);
    expect(await findInvitation(t.db, token, 'production')).toMatchObject({
      open: true,
      invitation: { id: ownersInvitation!.id, role: 'owner' },
    });
    expect(await mailsTo(email)).toBe(1);
    const revoked = await t.db
      .selectFrom('audit_events')
      .select('event')
      .where('organization_id', '=', s.orgId)
      .where('event', '=', 'invitation.revoked')
      .execute();
    expect(revoked).toEqual([]);
    // The refused attempts did not use up the organization's hourly allowance of invitations.
    const other = fresh('colleague');
    expect((await inviteFromMembersPage(admin, s.ein, other, 'member')).status).toBe(200);
  });

  it('an Owner replaces an Owner invitation with a lower role, and an Admin replaces invitations they could revoke', async () => {
    const s = await createStaff(t.db);
    const owner = await dashboardSession(server, 'production', s.users.owner);
    const admin = await dashboardSession(server, 'production', s.users.admin);
    const first = fresh('first');
    expect((await inviteFromMembersPage(owner, s.ein, first, 'owner')).status).toBe(200);
    expect((await inviteFromMembersPage(owner, s.ein, first, 'member')).status).toBe(200);
    expect((await invitationsOf(s.orgId, first)).map((i) => [i.role, i.revoked_at !== null])).toEqual([
      ['owner', true],
      ['member', false],
    ]);

    const second = fresh('second');
    expect((await inviteFromMembersPage(owner, s.ein, second, 'admin')).status).toBe(200);
    expect((await inviteFromMembersPage(admin, s.ein, second, 'read_only')).status).toBe(200);
    expect((await invitationsOf(s.orgId, second)).map((i) => [i.role, i.revoked_at !== null])).toEqual([
      ['admin', true],
      ['read_only', false],
    ]);
  });

  it('an expired Owner invitation withdraws nothing when replaced: an Admin may invite the address', async () => {
    const s = await createStaff(t.db);
    const email = fresh('late');
    const owner = await dashboardSession(server, 'production', s.users.owner);
    expect((await inviteFromMembersPage(owner, s.ein, email, 'owner')).status).toBe(200);
    await t.db
      .updateTable('invitations')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('email', '=', email)
      .execute();
    const admin = await dashboardSession(server, 'production', s.users.admin);
    expect((await inviteFromMembersPage(admin, s.ein, email, 'member')).status).toBe(200);
    expect((await invitationsOf(s.orgId, email)).map((i) => [i.role, i.revoked_at !== null])).toEqual([
      ['owner', true],
      ['member', false],
    ]);
  });
});
