import { listMembershipsOfOrganization } from '../../accounts/repository.js';
import { requireOrganization } from '../../accounts/service.js';
import { addMember, removeMember, setMemberRole } from '../../accounts/memberships.js';
import { formatEin } from '../../accounts/ein.js';
import { requireString, type Command } from '../command.js';

const memberOptions = { org: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' } } as const;

export const membersAdd: Command = {
  path: ['members', 'add'],
  summary: "add a user to an organization's staff",
  usage: 'members add --org <ein> --email <email> --role owner|admin|member|read_only',
  options: memberOptions,
  async run(ctx) {
    const m = await addMember(await ctx.db(), { org: requireString(ctx.values, 'org'), email: requireString(ctx.values, 'email'), role: requireString(ctx.values, 'role') });
    return { json: { ...m }, text: `${m.email} is now ${m.role} of ${m.org}` };
  },
};

export const membersSetRole: Command = {
  path: ['members', 'set-role'],
  summary: "change a member's role",
  usage: 'members set-role --org <ein> --email <email> --role owner|admin|member|read_only',
  options: memberOptions,
  async run(ctx) {
    const m = await setMemberRole(await ctx.db(), { org: requireString(ctx.values, 'org'), email: requireString(ctx.values, 'email'), role: requireString(ctx.values, 'role') });
    return { json: { ...m }, text: `${m.email} is now ${m.role} of ${m.org}` };
  },
};

export const membersRemove: Command = {
  path: ['members', 'remove'],
  summary: 'remove a user from an organization',
  usage: 'members remove --org <ein> --email <email>',
  options: { org: { type: 'string' }, email: { type: 'string' } },
  async run(ctx) {
    const m = await removeMember(await ctx.db(), { org: requireString(ctx.values, 'org'), email: requireString(ctx.values, 'email') });
    return { json: { ...m }, text: `${m.email} removed from ${m.org}; ${m.revoked_authorizations} authorization${m.revoked_authorizations === 1 ? '' : 's'} they approved revoked` };
  },
};

export const membersList: Command = {
  path: ['members', 'list'],
  summary: "list an organization's members",
  usage: 'members list --org <ein>',
  options: { org: { type: 'string' } },
  async run(ctx) {
    const db = await ctx.db();
    const org = await requireOrganization(db, requireString(ctx.values, 'org'));
    const rows = await listMembershipsOfOrganization(db, org.id);
    const members = rows.map((r) => ({ email: r.email, role: r.role }));
    return { json: { org: formatEin(org.ein), members }, text: members.map((m) => `${m.email.padEnd(32)} ${m.role}`).join('\n') || '(no members)' };
  },
};
