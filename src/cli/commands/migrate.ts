import type { Command } from './command.js';

export const migrate: Command = {
  path: ['migrate'],
  summary: 'apply pending database migrations',
  usage: 'migrate',
  options: {},
  async run(ctx) {
    const { migrateToLatest } = await import('../../db/migrator.js');
    const { applied } = await migrateToLatest(await ctx.db());
    return { json: { applied }, text: applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date' };
  },
};
