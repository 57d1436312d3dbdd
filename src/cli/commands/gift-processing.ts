import type { Environment } from '../../db/schema.js';
import type { PaymentSourceType, PropertyResourceType, PropertyType } from '../../db/schema-gift.js';
import { optionalString, requireString, UsageError, type Command, type CommandContext } from './command.js';

/**
 * Gift processing's set-up by an operator (docs/gift-processing.md, "The API"): payment sources,
 * PO box requests to lockbox providers, properties. Each creation is audited (via admin_cli).
 */

/** Unset, production: as `members invite` (the one other command whose --environment is optional with a default). */
function environmentOf(ctx: CommandContext): Environment {
  const value = optionalString(ctx.values, 'environment');
  if (value === undefined) return 'production';
  if (value !== 'production' && value !== 'sandbox') throw new UsageError('--environment must be production or sandbox');
  return value;
}

function oneOf<T extends string>(ctx: CommandContext, name: string, allowed: readonly T[], fallback?: T): T {
  const value = fallback === undefined ? requireString(ctx.values, name) : (optionalString(ctx.values, name) ?? fallback);
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}`);
  return value as T;
}

/** The organization an option names; call after every option is read, so a usage error opens no database. */
async function organizationOfKind(ctx: CommandContext, option: string, kind: 'nonprofit' | 'lockbox_provider') {
  const ein = requireString(ctx.values, option);
  const { requireOrganization } = await import('../../accounts/service.js');
  const org = await requireOrganization(await ctx.db(), ein);
  const { formatEin } = await import('../../accounts/ein.js');
  if (org.kind !== kind) throw new UsageError(`--${option} ${formatEin(org.ein)} is a ${org.kind}, not a ${kind.replace('_', ' ')}`);
  return { ...org, ein: formatEin(org.ein) };
}

export const paymentSourcesAdd: Command = {
  path: ['payment-sources', 'add'],
  summary: "add a payment source on a nonprofit's processing financial account (lockbox sources come with their lockbox)",
  usage:
    'payment-sources add --org <ein> --name <name> [--type manual|portal|grantmaker] [--ach-account <digits>] [--ach-routing <9-digit routing number>] [--environment production|sandbox]',
  options: {
    org: { type: 'string' },
    name: { type: 'string' },
    type: { type: 'string' },
    'ach-account': { type: 'string' },
    'ach-routing': { type: 'string' },
    environment: { type: 'string' },
  },
  async run(ctx) {
    const environment = environmentOf(ctx);
    const sourceType = oneOf<PaymentSourceType>(ctx, 'type', ['manual', 'portal', 'grantmaker'], 'manual');
    const name = requireString(ctx.values, 'name');
    requireString(ctx.values, 'org');
    const account = optionalString(ctx.values, 'ach-account');
    const routing = optionalString(ctx.values, 'ach-routing');
    if ((account === undefined) !== (routing === undefined)) throw new UsageError('--ach-account and --ach-routing go together');
    const org = await organizationOfKind(ctx, 'org', 'nonprofit');
    const { addPaymentSource } = await import('../../gift-processing/payment-sources-service.js');
    const row = await addPaymentSource(await ctx.db(), {
      organizationId: org.id,
      environment,
      name,
      sourceType,
      ach: account === undefined || routing === undefined ? undefined : { accountNumber: account, routingNumber: routing },
      via: 'admin_cli',
    });
    return {
      json: {
        id: row.id,
        org: org.ein,
        environment,
        name: row.name,
        source_type: row.source_type,
        financial_account_id: row.financial_account_id,
      },
      text: `payment source ${row.id} (${row.source_type}) "${row.name}" for ${org.ein} in ${environment}`,
    };
  },
};

export const paymentSourcesList: Command = {
  path: ['payment-sources', 'list'],
  summary: "list a nonprofit's payment sources, newest first",
  usage: 'payment-sources list --org <ein> [--environment production|sandbox]',
  options: { org: { type: 'string' }, environment: { type: 'string' } },
  async run(ctx) {
    const environment = environmentOf(ctx);
    const org = await organizationOfKind(ctx, 'org', 'nonprofit');
    const { paymentSourcesPage } = await import('../../gift-processing/payment-sources-service.js');
    const rows = await paymentSourcesPage(await ctx.db(), { organizationId: org.id, environment }, undefined, 1000);
    const sources = rows.map((r) => ({
      id: r.id,
      name: r.name,
      source_type: r.source_type,
      lockbox_id: r.lockbox_id,
      ach: r.ach_account_number === null ? null : { account_number: r.ach_account_number, routing_number: r.ach_routing_number },
      created_at: r.created_at.toISOString(),
    }));
    return {
      json: { org: org.ein, environment, payment_sources: sources },
      text:
        sources.map((s) => `${s.id}  ${s.source_type.padEnd(10)}  ${s.name}${s.lockbox_id ? `  ${s.lockbox_id}` : ''}`).join('\n') ||
        '(no payment sources)',
    };
  },
};

export const lockboxesRequest: Command = {
  path: ['lockboxes', 'request'],
  summary: 'ask a lockbox provider for a PO box for a nonprofit; prints the one-time request_id the provider answers with',
  usage: 'lockboxes request --org <nonprofit ein> --provider <lockbox provider ein> [--environment production|sandbox]',
  options: { org: { type: 'string' }, provider: { type: 'string' }, environment: { type: 'string' } },
  async run(ctx) {
    const environment = environmentOf(ctx);
    requireString(ctx.values, 'org');
    requireString(ctx.values, 'provider');
    const org = await organizationOfKind(ctx, 'org', 'nonprofit');
    const provider = await organizationOfKind(ctx, 'provider', 'lockbox_provider');
    const { requestLockbox } = await import('../../gift-processing/lockboxes-service.js');
    const requestId = await requestLockbox(await ctx.db(), {
      nonprofitId: org.id,
      providerId: provider.id,
      providerEin: provider.ein,
      environment,
      via: 'admin_cli',
    });
    return {
      json: { request_id: requestId, org: org.ein, provider: provider.ein, environment },
      text: `request_id: ${requestId}\n(give it to ${provider.name}; it answers once, with POST /v1/lockboxes/fulfill_request)`,
    };
  },
};

export const lockboxesList: Command = {
  path: ['lockboxes', 'list'],
  summary: "list lockboxes (every one, or a nonprofit's), newest first, in both environments",
  usage: 'lockboxes list [--org <nonprofit ein>]',
  options: { org: { type: 'string' } },
  async run(ctx) {
    const org = optionalString(ctx.values, 'org') === undefined ? undefined : await organizationOfKind(ctx, 'org', 'nonprofit');
    const { lockboxesForAdmin } = await import('../../gift-processing/lockboxes-service.js');
    const { formatEin } = await import('../../accounts/ein.js');
    const rows = await lockboxesForAdmin(await ctx.db(), org?.id);
    const lockboxes = rows.map((r) => ({
      id: r.id,
      environment: r.environment,
      location_id: r.location_id,
      address: r.address,
      payment_source_id: r.payment_source_id,
      nonprofit: formatEin(r.nonprofit_ein),
      provider: formatEin(r.provider_ein),
      created_at: r.created_at.toISOString(),
    }));
    return {
      json: { lockboxes },
      text:
        rows
          .map(
            (r) =>
              `${r.id}  ${r.environment.padEnd(10)}  ${r.location_id}  ${r.nonprofit_name} (${formatEin(r.nonprofit_ein)}) at ${r.provider_name}`,
          )
          .join('\n') || '(no lockboxes)',
    };
  },
};

export const propertiesAdd: Command = {
  path: ['properties', 'add'],
  summary: "add a property to a nonprofit's donations or deposits (an enum property with its --option values, in order)",
  usage:
    'properties add --org <ein> --name <name> --resource-type donation|deposit --type text|enum|user|boolean|date [--option <name> ...] [--environment production|sandbox]',
  options: {
    org: { type: 'string' },
    name: { type: 'string' },
    'resource-type': { type: 'string' },
    type: { type: 'string' },
    option: { type: 'string', multiple: true },
    environment: { type: 'string' },
  },
  async run(ctx) {
    const environment = environmentOf(ctx);
    const resourceType = oneOf<PropertyResourceType>(ctx, 'resource-type', ['donation', 'deposit']);
    const propertyType = oneOf<PropertyType>(ctx, 'type', ['text', 'enum', 'user', 'boolean', 'date']);
    const name = requireString(ctx.values, 'name');
    requireString(ctx.values, 'org');
    const raw = ctx.values.option;
    const options = Array.isArray(raw) ? raw : typeof raw === 'string' ? [raw] : [];
    const org = await organizationOfKind(ctx, 'org', 'nonprofit');
    const { addProperty } = await import('../../gift-processing/properties-service.js');
    const made = await addProperty(await ctx.db(), {
      organizationId: org.id,
      environment,
      name,
      resourceType,
      propertyType,
      options,
      via: 'admin_cli',
    });
    return {
      json: {
        id: made.property.id,
        org: org.ein,
        environment,
        name: made.property.name,
        resource_type: resourceType,
        property_type: propertyType,
        option_ids: made.options,
      },
      text: `property ${made.property.id} "${made.property.name}" (${propertyType}) on ${org.ein}'s ${resourceType}s in ${environment}${made.options.length ? `, ${made.options.length} options` : ''}`,
    };
  },
};
