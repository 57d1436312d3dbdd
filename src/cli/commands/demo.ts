import { requireString, UsageError, type Command, type OptionValues } from './command.js';

function count(values: OptionValues, name: string, fallback: number, max: number): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > max) throw new UsageError(`--${name} must be a whole number from 0 to ${max}`);
  return n;
}

export const demoSeed: Command = {
  path: ['demo', 'seed'],
  summary: 'add realistic connects, grants, donations and bank accounts to an organization (never replaces)',
  usage:
    'demo seed --org <ein> --environment production|sandbox [--donations N] [--connects N] [--grants N] [--accounts N] [--transactions N]',
  options: {
    org: { type: 'string' },
    environment: { type: 'string' },
    donations: { type: 'string' },
    connects: { type: 'string' },
    grants: { type: 'string' },
    accounts: { type: 'string' },
    transactions: { type: 'string' },
  },
  async run(ctx) {
    const { requireOrganization } = await import('../../accounts/service.js');
    const { inTransaction } = await import('../../db/executor.js');
    const { seedNonprofitData } = await import('../../demo/nonprofit-data.js');
    const { seedBankData } = await import('../../demo/bank-data.js');
    const environment = requireString(ctx.values, 'environment');
    if (environment !== 'production' && environment !== 'sandbox') throw new UsageError('--environment must be production or sandbox');
    // Every value is checked before the database is opened: a bad one is a usage error (exit 2).
    const counts = {
      connects: count(ctx.values, 'connects', 2, 100),
      grantsPerConnect: count(ctx.values, 'grants', 10, 100_000),
      donations: count(ctx.values, 'donations', 200, 1_000_000),
      accounts: count(ctx.values, 'accounts', 2, 100),
      transactionsPerAccount: count(ctx.values, 'transactions', 500, 200_000),
    };
    const db = await ctx.db();
    const org = await requireOrganization(db, requireString(ctx.values, 'org'));
    const options = {
      organizationId: org.id,
      environment,
      connects: counts.connects,
      grantsPerConnect: counts.grantsPerConnect,
      donations: counts.donations,
    } as const;
    // Bank data: accounts with 24 monthly statements each; --transactions is per account.
    const bank = {
      organizationId: org.id,
      environment,
      accounts: counts.accounts,
      transactionsPerAccount: counts.transactionsPerAccount,
    } as const;
    const ids = await inTransaction(db, async (trx) => ({
      ...(await seedNonprofitData(trx, options)),
      ...(await seedBankData(trx, bank)),
    }));
    return {
      json: { ...ids },
      text: `added ${ids.connect_ids.length} connects, ${ids.grant_ids.length} grants, ${ids.donation_ids.length} donations, ${ids.account_ids.length} bank accounts (${ids.statement_ids.length} statements, ${bank.accounts * bank.transactionsPerAccount} transactions) to ${org.name} (${environment})`,
    };
  },
};

export const demoBmf: Command = {
  path: ['demo', 'bmf'],
  summary: 'write a demo IRS EO BMF CSV file in the published layout (N organizations with realistic names) for `organizations import`',
  usage: 'demo bmf --out <file.csv> [--rows N] [--seed N] [--first-ein N]',
  options: {
    out: { type: 'string' },
    rows: { type: 'string' },
    seed: { type: 'string' },
    'first-ein': { type: 'string' },
  },
  async run(ctx) {
    const path = await import('node:path');
    const { writeDemoBmfFile } = await import('../../demo/bmf-file.js');
    const file = path.resolve(ctx.cwd, requireString(ctx.values, 'out'));
    const rows = count(ctx.values, 'rows', 10_000, 10_000_000);
    const seed = count(ctx.values, 'seed', 1, 2 ** 31);
    const firstEin = count(ctx.values, 'first-ein', 100_000_000, 999_999_999);
    if (firstEin + rows > 1_000_000_000) throw new UsageError('--first-ein plus --rows must stay within 9 digits (999999999)');
    const started = performance.now();
    await writeDemoBmfFile(file, { rows, seed, firstEin });
    const seconds = (performance.now() - started) / 1000;
    return {
      json: { file, rows, seed, first_ein: firstEin, seconds: Math.round(seconds * 10) / 10 },
      text: `wrote ${rows} organizations to ${file} in ${seconds.toFixed(1)} s; import them with: npm run admin -- organizations import ${file}`,
    };
  },
};
