import { CommandFailed, optionalString, type Command } from './command.js';

const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export const ledgerVerify: Command = {
  path: ['ledger', 'verify'],
  summary:
    'proves the ledger: it sums to zero, every transfer balances, every stored balance is its entries, no floored account below zero; exits 1 naming the first broken account',
  usage: 'ledger verify [--environment production|sandbox]',
  options: { environment: { type: 'string' } },
  async run(ctx) {
    const { verifyLedger } = await import('../../ledger/verify.js');
    const environment = optionalString(ctx.values, 'environment') as 'production' | 'sandbox' | undefined;
    const result = await verifyLedger(await ctx.db(), environment ? { environment } : {});
    const scope = environment ? ` (${environment})` : '';
    if (result.ok) {
      return {
        json: { ...result, environment: environment ?? null },
        text: `ledger verified${scope}: ${count(result.accounts, 'account')}, ${count(result.transfers, 'transfer')}, ${count(result.entries, 'entry', 'entries')}, sum 0`,
      };
    }
    const p = result.problem;
    const account = p.accountId
      ? `ledger account ${p.accountId} (${p.purpose ?? 'unknown purpose'}, ${p.organizationId ? `organization ${p.organizationId}` : 'no organization'}, ${p.environment})`
      : `the ledger${p.environment ? ` (${p.environment})` : ''}`;
    throw new CommandFailed({
      json: { ...result, environment: environment ?? null },
      text: `ledger broken${scope}: ${account}: ${p.reason}`,
    });
  },
};
