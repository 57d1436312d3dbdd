import { optionalString, requireString, type Command } from './command.js';

export const apiKeysCreate: Command = {
  path: ['api-keys', 'create'],
  summary: 'create an API key for an organization; prints the key once',
  usage: 'api-keys create --org <ein> --environment production|sandbox [--name <what it is for>]',
  options: { org: { type: 'string' }, environment: { type: 'string' }, name: { type: 'string' } },
  async run(ctx) {
    const { createApiKey } = await import('../../api-keys/service.js');
    const created = await createApiKey(await ctx.db(), {
      org: requireString(ctx.values, 'org'),
      environment: requireString(ctx.values, 'environment'),
      name: optionalString(ctx.values, 'name'),
    });
    return {
      json: { ...created },
      text: `id:   ${created.id}\n${created.name ? `name: ${created.name}\n` : ''}key:  ${created.key}\n(the key is shown once; it is stored only as a SHA-256 hash)`,
    };
  },
};

export const apiKeysRevoke: Command = {
  path: ['api-keys', 'revoke'],
  summary: 'revoke an API key (it stops working at once)',
  usage: 'api-keys revoke --id <id>',
  options: { id: { type: 'string' } },
  async run(ctx) {
    const { revokeApiKey } = await import('../../api-keys/service.js');
    const revoked = await revokeApiKey(await ctx.db(), requireString(ctx.values, 'id'));
    return { json: { ...revoked }, text: `revoked ${revoked.id}` };
  },
};

export const apiKeysList: Command = {
  path: ['api-keys', 'list'],
  summary: "list an organization's API keys (revoked ones with revoked_at)",
  usage: 'api-keys list --org <ein>',
  options: { org: { type: 'string' } },
  async run(ctx) {
    const { listApiKeys } = await import('../../api-keys/service.js');
    const listed = await listApiKeys(await ctx.db(), requireString(ctx.values, 'org'));
    return {
      json: listed,
      text:
        listed.api_keys
          .map(
            (k) =>
              `${k.id}  ${k.environment.padEnd(10)}  ${k.prefix}…  created ${k.created_at}${k.revoked_at ? `  revoked ${k.revoked_at}` : ''}${k.name ? `  ${k.name}` : ''}`,
          )
          .join('\n') || '(no API keys)',
    };
  },
};
