import { optionalString, requireString, type Command } from './command.js';

const memberOptions = { org: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' } } as const;

export const membersAdd: Command = {
  path: ['members', 'add'],
  summary: "add a user to an organization's staff",
  usage: 'members add --org <ein> --email <email> --role owner|admin|member|read_only',
  options: memberOptions,
  async run(ctx) {
    const { addMember } = await import('../../accounts/memberships.js');
    const m = await addMember(await ctx.db(), {
      org: requireString(ctx.values, 'org'),
      email: requireString(ctx.values, 'email'),
      role: requireString(ctx.values, 'role'),
    });
    return { json: { ...m }, text: `${m.email} is now ${m.role} of ${m.org}` };
  },
};

export const membersSetRole: Command = {
  path: ['members', 'set-role'],
  summary: "change a member's role",
  usage: 'members set-role --org <ein> --email <email> --role owner|admin|member|read_only',
  options: memberOptions,
  async run(ctx) {
    const { setMemberRole } = await import('../../accounts/memberships.js');
    const m = await setMemberRole(await ctx.db(), {
      org: requireString(ctx.values, 'org'),
      email: requireString(ctx.values, 'email'),
      role: requireString(ctx.values, 'role'),
    });
    return { json: { ...m }, text: `${m.email} is now ${m.role} of ${m.org}` };
  },
};

export const membersRemove: Command = {
  path: ['members', 'remove'],
  summary: 'remove a user from an organization',
  usage: 'members remove --org <ein> --email <email>',
  options: { org: { type: 'string' }, email: { type: 'string' } },
  async run(ctx) {
    const { removeMember } = await import('../../accounts/memberships.js');
    const m = await removeMember(await ctx.db(), { org: requireString(ctx.values, 'org'), email: requireString(ctx.values, 'email') });
    return {
      json: { ...m },
      text: `${m.email} removed from ${m.org}; ${m.revoked_authorizations} authorization${m.revoked_authorizations === 1 ? '' : 's'} they approved revoked`,
    };
  },
};

export const membersList: Command = {
  path: ['members', 'list'],
  summary: "list an organization's members",
  usage: 'members list --org <ein>',
  options: { org: { type: 'string' } },
  async run(ctx) {
    const { listMembershipsOfOrganization } = await import('../../accounts/repository.js');
    const { requireOrganization } = await import('../../accounts/service.js');
    const { formatEin } = await import('../../accounts/ein.js');
    const db = await ctx.db();
    const org = await requireOrganization(db, requireString(ctx.values, 'org'));
    const rows = await listMembershipsOfOrganization(db, org.id);
    const members = rows.map((r) => ({ email: r.email, role: r.role }));
    return {
      json: { org: formatEin(org.ein), members },
      text: members.map((m) => `${m.email.padEnd(32)} ${m.role}`).join('\n') || '(no members)',
    };
  },
};

export const membersInvite: Command = {
  path: ['members', 'invite'],
  summary: 'invite an e-mail address to join an organization with a role (the link goes by e-mail)',
  usage: 'members invite --org <ein> --email <email> --role owner|admin|member|read_only [--environment production|sandbox]',
  options: { ...memberOptions, environment: { type: 'string' } },
  async run(ctx) {
    const { requireOrganization } = await import('../../accounts/service.js');
    const { formatEin } = await import('../../accounts/ein.js');
    const { inviteMember } = await import('../../accounts/invitations.js');
    const { createMailSender } = await import('../../mail/sender.js');
    const db = await ctx.db();
    const org = await requireOrganization(db, requireString(ctx.values, 'org'));
    const environment = optionalString(ctx.values, 'environment') === 'sandbox' ? 'sandbox' : 'production';
    // The maker invites (actor null): any role, audited without an actor (docs/accounts.md, "Invitations").
    const sent = await inviteMember(
      db,
      {
        mail: createMailSender(ctx.config, db),
        dashboardOrigins: { production: ctx.config.dashboard_url, sandbox: ctx.config.sandbox_dashboard_url },
      },
      {
        organizationId: org.id,
        email: requireString(ctx.values, 'email'),
        role: requireString(ctx.values, 'role'),
        environment,
        actor: null,
      },
    );
    const json = {
      org: formatEin(org.ein),
      email: sent.email,
      role: sent.role,
      environment,
      expires_at: sent.expiresAt.toISOString(),
      existing_user: sent.existingUser,
      replaced: sent.replaced,
    };
    // The link is never printed: it goes to the invitee only (with no SMTP server, into `admin mail list`).
    const where = ctx.config.smtp_url ? 'by e-mail' : 'to the dev mail sink (see `npm run admin -- mail list`)';
    return {
      json,
      text: `invitation for ${sent.email} to join ${json.org} as ${sent.role} sent ${where}; the link works once, until ${json.expires_at}${sent.replaced ? ' (it replaces the earlier invitation)' : ''}`,
    };
  },
};

export const membersInvitations: Command = {
  path: ['members', 'invitations'],
  summary: "list an organization's open invitations",
  usage: 'members invitations --org <ein>',
  options: { org: { type: 'string' } },
  async run(ctx) {
    const { requireOrganization } = await import('../../accounts/service.js');
    const { formatEin } = await import('../../accounts/ein.js');
    const { listOpenInvitations } = await import('../../accounts/invitations.js');
    const db = await ctx.db();
    const org = await requireOrganization(db, requireString(ctx.values, 'org'));
    const invitations = (await listOpenInvitations(db, org.id)).map((i) => ({
      email: i.email,
      role: i.role,
      environment: i.environment,
      invited_by: i.inviter_email,
      created_at: i.created_at.toISOString(),
      expires_at: i.expires_at.toISOString(),
    }));
    return {
      json: { org: formatEin(org.ein), invitations },
      text:
        invitations.map((i) => `${i.email.padEnd(32)} ${i.role.padEnd(9)} expires ${i.expires_at}`).join('\n') || '(no open invitations)',
    };
  },
};

export const membersRevokeInvitation: Command = {
  path: ['members', 'revoke-invitation'],
  summary: "withdraw an address's open invitation (its link stops working)",
  usage: 'members revoke-invitation --org <ein> --email <email>',
  options: { org: { type: 'string' }, email: { type: 'string' } },
  async run(ctx) {
    const { requireOrganization } = await import('../../accounts/service.js');
    const { formatEin } = await import('../../accounts/ein.js');
    const { revokeInvitation } = await import('../../accounts/invitations.js');
    const db = await ctx.db();
    const org = await requireOrganization(db, requireString(ctx.values, 'org'));
    const revoked = await revokeInvitation(db, {
      organizationId: org.id,
      which: { email: requireString(ctx.values, 'email') },
      actor: null,
    });
    return {
      json: { org: formatEin(org.ein), email: revoked.email, role: revoked.role },
      text: `the invitation of ${revoked.email} to ${formatEin(org.ein)} is withdrawn`,
    };
  },
};
