import path from 'node:path';
import type { Environment } from '../../db/schema.js';
import type { ClientsSnapshot } from '../../oidc/clients/file-store.js';
import type { RegistryStanding } from '../../oidc/clients/revision.js';
import type { RegistryComparison, RegistryContext } from '../../oidc/clients/service.js';
import { generateKeysFile, readJwksFile } from './client-key-files.js';
import { optionalString, requireString, UsageError, type Command, type CommandContext } from './command.js';

async function registry(ctx: CommandContext): Promise<RegistryContext> {
  const { passwordParamsFrom } = await import('../../accounts/passwords.js');
  return {
    db: await ctx.db(),
    clientsFile: path.resolve(ctx.config.clients_file),
    passwordParams: passwordParamsFrom(ctx.config),
    profile: ctx.config.profile,
  };
}

function list(values: CommandContext['values'], name: string): string[] {
  const value = values[name];
  const items = Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
  return items.flatMap((v) => v.split(name === 'scope' ? ' ' : /\s+/)).filter(Boolean);
}

function environmentOption(values: CommandContext['values'], required: boolean): Environment | undefined {
  const value = optionalString(values, 'environment');
  if (value === undefined) {
    if (required) throw new UsageError('--environment is required (production or sandbox)');
    return undefined;
  }
  if (value !== 'production' && value !== 'sandbox') throw new UsageError('--environment must be production or sandbox');
  return value;
}

export const clientsAdd: Command = {
  path: ['clients', 'add'],
  summary: 'register a client; prints its secret once (a fapi2 client has keys, no secret)',
  usage:
    'clients add --environment production|sandbox --name <name> [--logo-uri <uri>] --redirect-uri <uri>... [--post-logout-redirect-uri <uri>...] --scope <scope>... [--subject-type user|organization] [--ip-allow-list <cidr>...] [--require-mfa] [--profile standard|fapi2] [--jwks-file <file>] [--jwks-uri <https uri>] [--generate-keys <file>]',
  options: {
    environment: { type: 'string' },
    name: { type: 'string' },
    'logo-uri': { type: 'string' },
    'redirect-uri': { type: 'string', multiple: true },
    'post-logout-redirect-uri': { type: 'string', multiple: true },
    scope: { type: 'string', multiple: true },
    'subject-type': { type: 'string' },
    'ip-allow-list': { type: 'string', multiple: true },
    'require-mfa': { type: 'boolean' },
    profile: { type: 'string' },
    'jwks-file': { type: 'string' },
    'jwks-uri': { type: 'string' },
    'generate-keys': { type: 'string' },
  },
  async run(ctx) {
    const { addClient, addFapi2Client } = await import('../../oidc/clients/service.js');
    const environment = environmentOption(ctx.values, true)!;
    const redirectUris = list(ctx.values, 'redirect-uri');
    const scopes = list(ctx.values, 'scope');
    if (redirectUris.length === 0) throw new UsageError('at least one --redirect-uri is required');
    if (scopes.length === 0) throw new UsageError('at least one --scope is required');
    const input = {
      environment,
      name: requireString(ctx.values, 'name'),
      logoUri: optionalString(ctx.values, 'logo-uri'),
      redirectUris,
      postLogoutRedirectUris: list(ctx.values, 'post-logout-redirect-uri'),
      scopes,
      subjectType: optionalString(ctx.values, 'subject-type'),
      ipAllowList: list(ctx.values, 'ip-allow-list'),
      requireMfa: ctx.values['require-mfa'] === true,
    };
    const profile = optionalString(ctx.values, 'profile') ?? 'standard';
    const jwksFile = optionalString(ctx.values, 'jwks-file');
    const jwksUri = optionalString(ctx.values, 'jwks-uri');
    const keysFile = optionalString(ctx.values, 'generate-keys');
    if (profile === 'fapi2') {
      if ([jwksFile, jwksUri, keysFile].filter((v) => v !== undefined).length !== 1)
        throw new UsageError(
          'a fapi2 client needs exactly one of --jwks-file (its public keys, a JWK Set), --jwks-uri (where it publishes them) or --generate-keys (a new key pair: the private key written to that file)',
        );
      const keys = jwksFile ? { jwks: readJwksFile(ctx.cwd, jwksFile) } : jwksUri ? { jwksUri } : undefined;
      const generated = keysFile ? await generateKeysFile(ctx.cwd, keysFile) : undefined;
      let created;
      try {
        created = await addFapi2Client(await registry(ctx), { ...input, ...(keys ?? { jwks: generated!.jwks }) });
      } catch (error) {
        generated?.discard();
        throw error;
      }
      const lines = [
        `client_id: ${created.client_id}`,
        'profile:   fapi2 (no secret: it authenticates with private_key_jwt, signed by its registered keys)',
      ];
      if (generated)
        lines.push(
          `keys_file: ${generated.file} (the private key, kid ${generated.kid}, mode 0600: hand it to the client only; this server keeps the public key)`,
        );
      return {
        json: { ...created, ...(generated ? { keys_file: generated.file, kid: generated.kid } : {}) },
        text: lines.join('\n'),
      };
    }
    if (profile !== 'standard') throw new UsageError('--profile must be standard or fapi2');
    if (jwksFile !== undefined || jwksUri !== undefined || keysFile !== undefined)
      throw new UsageError(
        '--jwks-file, --jwks-uri and --generate-keys are for --profile fapi2 (a standard client authenticates with its secret)',
      );
    const created = await addClient(await registry(ctx), input);
    return {
      json: { ...created },
      text: `client_id:     ${created.client_id}\nclient_secret: ${created.client_secret}\n(the secret is shown once; it is stored only as an argon2id hash)`,
    };
  },
};

export const clientsRotateSecret: Command = {
  path: ['clients', 'rotate-secret'],
  summary: "replace a client's secret; prints the new one once",
  usage: 'clients rotate-secret --client-id <id>',
  options: { 'client-id': { type: 'string' } },
  async run(ctx) {
    const { rotateClientSecret } = await import('../../oidc/clients/service.js');
    const rotated = await rotateClientSecret(await registry(ctx), requireString(ctx.values, 'client-id'));
    return {
      json: { ...rotated },
      text: `client_id:     ${rotated.client_id}\nclient_secret: ${rotated.client_secret}\n(the old secret stops working at once)`,
    };
  },
};

export const clientsList: Command = {
  path: ['clients', 'list'],
  summary: 'list registered clients',
  usage: 'clients list [--environment production|sandbox]',
  options: { environment: { type: 'string' } },
  async run(ctx) {
    const { listRegisteredClients } = await import('../../oidc/clients/service.js');
    const clients = await listRegisteredClients(await ctx.db(), environmentOption(ctx.values, false));
    return {
      json: { clients },
      text:
        clients
          .map(
            (c) =>
              `${c.client_id}  ${c.environment.padEnd(10)}  ${c.profile.padEnd(8)}  ${c.subject_type.padEnd(12)}  ${c.name}  [${c.scopes.join(' ')}]`,
          )
          .join('\n') || '(no clients)',
    };
  },
};

export const clientsValidate: Command = {
  path: ['clients', 'validate'],
  summary:
    'check the clients file (every problem, with line and column) and whether it is the registry the database holds; exits non-zero when it is invalid',
  usage: 'clients validate',
  options: {},
  async run(ctx) {
    const { validateClientsFile } = await import('../../oidc/clients/service.js');
    const file = path.resolve(ctx.config.clients_file);
    const result = validateClientsFile(file, ctx.config.profile);
    if (!result.valid) throw new ClientsInvalid(result.problems);
    const registry = await registryStanding(ctx, file, result.snapshot);
    const lines = [`${file}: valid (${result.count} clients)`];
    if (registry.standing !== 'current') lines.push(registry.text);
    return {
      json: { valid: true, clients: result.count, file, revision: result.snapshot.revision ?? null, registry: registry.json },
      text: lines.join('\n'),
    };
  },
};

/**
 * Where the file stands against the registry in the database: current, newer (a running
 * server applies it), older or diverging (refused: which one is current, and where it came
 * from). A database that cannot be reached leaves it unknown; the file's validity stands.
 */
async function registryStanding(
  ctx: CommandContext,
  file: string,
  snapshot: ClientsSnapshot,
): Promise<{ standing: RegistryStanding | 'unknown'; json: Record<string, unknown>; text: string }> {
  const { compareWithRegistry } = await import('../../oidc/clients/service.js');
  let comparison: RegistryComparison;
  try {
    comparison = await compareWithRegistry(await ctx.db(), file, snapshot);
  } catch (error) {
    const reason = (error as Error)?.message ?? String(error);
    return {
      standing: 'unknown',
      json: { standing: 'unknown', reason },
      text: `${file}: not compared with the client registry (${reason.split('\n')[0]})`,
    };
  }
  const { standing, head, refusal } = comparison;
  const json = {
    standing,
    revision: head?.revision ?? null,
    applied_at: head?.appliedAt.toISOString() ?? null,
    applied_by: head?.appliedBy ?? null,
  };
  const text =
    refusal ??
    (standing === 'newer'
      ? `${file}: newer than the client registry (${head ? `revision ${head.revision}, applied ${head.appliedAt.toISOString()} by ${head.appliedBy}` : 'no revision recorded yet'}); a running server applies it within clients_poll_seconds, a starting one at once`
      : `${file}: the client registry holds these clients`);
  return { standing, json, text };
}

export const clientsRemove: Command = {
  path: ['clients', 'remove'],
  summary: 'remove a client (its tokens stop working)',
  usage: 'clients remove --client-id <id>',
  options: { 'client-id': { type: 'string' } },
  async run(ctx) {
    const { removeClient } = await import('../../oidc/clients/service.js');
    const removed = await removeClient(await registry(ctx), requireString(ctx.values, 'client-id'));
    return { json: { ...removed }, text: `removed ${removed.client_id}` };
  },
};

/** An invalid clients file: `--json` still prints one object, `{valid: false, problems}`. */
export class ClientsInvalid extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('; '));
    this.name = 'ClientsInvalid';
  }
}
