import { rotateSigningKeys } from '../../oidc/keys.js';
import { loadSecretBox } from '../../db/secret-box.js';
import type { Command } from '../command.js';

export const keysRotate: Command = {
  path: ['keys', 'rotate'],
  summary: 'rotate the signing keys of both environments (the next key, already published, starts signing)',
  usage: 'keys rotate',
  options: {},
  async run(ctx) {
    const { kids, keys } = await rotateSigningKeys(await ctx.db(), loadSecretBox(ctx.config));
    const published = keys.filter((k) => k.state === 'next').map((k) => k.kid);
    return {
      json: { kid: kids[0], kids, published, keys },
      text: [`now signing: ${kids.join(', ')}`, `published for next rotation: ${published.join(', ')}`, ...keys.map((k) => `  ${k.environment.padEnd(10)} ${k.alg} ${k.state.padEnd(8)} ${k.kid}${k.retire_after ? ` (until ${k.retire_after})` : ''}`)].join('\n'),
    };
  },
};
