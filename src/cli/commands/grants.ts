import { requireString, type Command } from './command.js';

/**
 * The production rail of DAFpay grants (docs/giving.md, "A grant's life"): an operator with the
 * bank's evidence of the DAF's payment completes a production grant (its money moves once), or
 * with the DAF's word cancels it; audited like the other settlements.
 */
function settleCommand(action: 'complete' | 'cancel', summary: string): Command {
  return {
    path: ['grants', action],
    summary,
    usage: `grants ${action} --id <grant id> --reference <the bank's or the DAF's evidence>`,
    options: { id: { type: 'string' }, reference: { type: 'string' } },
    async run(ctx) {
      const { bankRail } = await import('../../grantmaking/bank-rail.js');
      const { settleGrantAsOperator } = await import('../../giving/grant-lifecycle-service.js');
      const rail = bankRail(await ctx.db(), settleGrantAsOperator);
      const evidence = { id: requireString(ctx.values, 'id'), reference: requireString(ctx.values, 'reference') };
      const row = await (action === 'complete' ? rail.grantPaymentArrived(evidence) : rail.grantCanceled(evidence));
      const amount = Number(row.amount);
      return {
        json: { id: row.id, status: row.status, amount, reference: evidence.reference },
        text: `grant ${row.id} ${row.status} (${amount} cents), reference ${evidence.reference}`,
      };
    },
  };
}

export const grantsComplete = settleCommand(
  'complete',
  "a production DAFpay grant's payment arrived: completes it and posts its money once, audited with the bank's evidence",
);
export const grantsCancel = settleCommand(
  'cancel',
  'the DAF canceled a production DAFpay grant: no money moves; audited with the evidence',
);
