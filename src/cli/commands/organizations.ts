import path from 'node:path';
import { requireString, type Command } from './command.js';

/** The organizations directory (docs/directory.md): grantmakers' payees, from the IRS EO BMF. */
export const organizationsImport: Command = {
  path: ['organizations', 'import'],
  summary:
    'import an IRS EO BMF CSV file into the organizations directory (all of it or, on a bad line, none); re-importing changes only what changed',
  usage: 'organizations import <file.csv>',
  options: { file: { type: 'string' } },
  positionals: ['file'],
  async run(ctx) {
    const { importBmfFile } = await import('../../directory/import-service.js');
    // Resolved from where the command was typed, as any command-line tool's path (config/invocation-directory.ts).
    const file = path.resolve(ctx.cwd, requireString(ctx.values, 'file'));
    const counts = await importBmfFile(await ctx.db(), file);
    const changed = counts.inserted + counts.updated;
    return {
      json: { file, ...counts },
      text: `${file}: read ${counts.read}, inserted ${counts.inserted}, updated ${counts.updated}, unchanged ${counts.unchanged}${
        changed === 0 ? ' (nothing changed)' : ''
      }`,
    };
  },
};
