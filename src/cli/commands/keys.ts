import { optionalString, UsageError, type Command, type CommandContext, type CommandResult } from './command.js';

async function rotateSigning(ctx: CommandContext): Promise<CommandResult> {
  const { rotateSigningKeys } = await import('../../oidc/keys.js');
  const { loadSecretBox } = await import('../../keys/secret-box.js');
  const { kids, keys } = await rotateSigningKeys(await ctx.db(), loadSecretBox(ctx.config));
  const published = keys.filter((k) => k.state === 'next').map((k) => k.kid);
  return {
    json: { kind: 'signing', kid: kids[0], kids, published, keys },
    text: [
      `now signing: ${kids.join(', ')}`,
      `published for next rotation: ${published.join(', ')}`,
      ...keys.map(
        (k) => `  ${k.environment.padEnd(10)} ${k.alg} ${k.state.padEnd(8)} ${k.kid}${k.retire_after ? ` (until ${k.retire_after})` : ''}`,
      ),
    ].join('\n'),
  };
}

async function rotateServer(ctx: CommandContext): Promise<CommandResult> {
  const { loadSecretBox } = await import('../../keys/secret-box.js');
  const { rotateServerKeys } = await import('../../keys/server-keys.js');
  const rotation = await rotateServerKeys(await ctx.db(), loadSecretBox(ctx.config));
  return {
    json: { kind: 'server', ...rotation },
    text: [
      `new server keys sign from ${rotation.activates_at} (running servers load them before then): ${rotation.rotated.map((k) => `${k.name} ${k.kid}`).join(', ')}`,
      ...(rotation.removed.length > 0 ? [`removed (aged out): ${rotation.removed.map((k) => `${k.name} ${k.kid}`).join(', ')}`] : []),
      ...rotation.keys.map(
        (k) => `  ${k.name.padEnd(24)} ${k.state.padEnd(8)} ${k.kid}${k.verifies_until ? ` (verifies until ${k.verifies_until})` : ''}`,
      ),
    ].join('\n'),
  };
}

export const keysRotate: Command = {
  path: ['keys', 'rotate'],
  summary:
    'rotate keys: --kind signing (default) makes the published next signing key of both environments sign; --kind server adds new cookie, CSRF, client-auth cache and hashing keys that sign 15 s later, older ones verifying until they age out',
  usage: 'keys rotate [--kind signing|server]',
  options: { kind: { type: 'string' } },
  async run(ctx) {
    const kind = optionalString(ctx.values, 'kind') ?? 'signing';
    if (kind === 'signing') return rotateSigning(ctx);
    if (kind === 'server') return rotateServer(ctx);
    throw new UsageError('--kind must be signing or server');
  },
};
