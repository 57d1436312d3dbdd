import type { OrganizationKind } from '../../db/schema.js';
import { optionalString, requireString, type Command } from './command.js';

export const orgsAdd: Command = {
  path: ['orgs', 'add'],
  summary: 'add an organization',
  usage: 'orgs add --ein <ein> --name <name> [--kind nonprofit|fund_provider|grantmaker|platform|lockbox_provider]',
  options: { ein: { type: 'string' }, name: { type: 'string' }, kind: { type: 'string' } },
  async run(ctx) {
    const { addOrganization } = await import('../../accounts/service.js');
    const org = await addOrganization(await ctx.db(), {
      ein: requireString(ctx.values, 'ein'),
      name: requireString(ctx.values, 'name'),
      kind: optionalString(ctx.values, 'kind'),
    });
    return { json: { ...org }, text: `added ${org.kind} ${org.name} (${org.ein}), id ${org.id}` };
  },
};

export const orgsList: Command = {
  path: ['orgs', 'list'],
  summary: 'list organizations',
  usage: 'orgs list [--kind nonprofit|fund_provider|grantmaker|platform|lockbox_provider]',
  options: { kind: { type: 'string' } },
  async run(ctx) {
    const { listOrganizations } = await import('../../accounts/repository.js');
    const { organizationView } = await import('../../accounts/service.js');
    const kind = optionalString(ctx.values, 'kind');
    const orgs = (await listOrganizations(await ctx.db(), kind as OrganizationKind | undefined)).map(organizationView);
    return {
      json: { organizations: orgs },
      text: orgs.map((o) => `${o.ein}  ${o.kind.padEnd(16)}  ${o.name}`).join('\n') || '(no organizations)',
    };
  },
};

export const orgsRemove: Command = {
  path: ['orgs', 'remove'],
  summary: 'remove an organization; refused while it holds data unless --force',
  usage: 'orgs remove --ein <ein> [--force]',
  options: { ein: { type: 'string' }, force: { type: 'boolean' } },
  async run(ctx) {
    const { removeOrganization } = await import('../../accounts/organization-removal.js');
    const r = await removeOrganization(await ctx.db(), { ein: requireString(ctx.values, 'ein'), force: ctx.values.force === true });
    const held = Object.entries(r.removed)
      .filter(([, n]) => n > 0)
      .map(([label, n]) => `${n} ${label}`);
    return {
      json: { ...r },
      text: `removed ${r.name} (${r.ein})${held.length ? ` with ${held.join(', ')}` : ''}; ${r.revoked_authorizations} authorization${r.revoked_authorizations === 1 ? '' : 's'} revoked`,
    };
  },
};

export const orgsSecondApprover: Command = {
  path: ['orgs', 'second-approver'],
  summary: 'turn on or off a grantmaker\'s "disbursements need a second person to approve"',
  usage: 'orgs second-approver --ein <ein> --set on|off',
  options: { ein: { type: 'string' }, set: { type: 'string' } },
  async run(ctx) {
    // The usage line's `on|off` is checked before the command runs (cli/usage.ts).
    const set = requireString(ctx.values, 'set');
    const { setRequireSecondApproverByEin } = await import('../../accounts/organization-settings.js');
    const ein = requireString(ctx.values, 'ein');
    const { name } = await setRequireSecondApproverByEin(await ctx.db(), { ein, required: set === 'on' });
    return {
      json: { ein, require_second_approver: set === 'on' },
      text: `${name}: disbursements ${set === 'on' ? 'now need' : 'no longer need'} a second person to approve`,
    };
  },
};
