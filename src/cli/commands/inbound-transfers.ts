import { requireString, type Command } from './command.js';

/**
 * The production rail of inbound transfers (docs/grantmaking.md, "The bank rail port"): an
 * operator with the bank's evidence completes or fails a production transfer.
 */
function settleCommand(action: 'complete' | 'fail', summary: string): Command {
  return {
    path: ['inbound-transfers', action],
    summary,
    usage: `inbound-transfers ${action} --id <inbound transfer id> --reference <the bank's evidence>`,
    options: { id: { type: 'string' }, reference: { type: 'string' } },
    async run(ctx) {
      const { bankRail } = await import('../../grantmaking/bank-rail.js');
      const rail = bankRail(await ctx.db());
      const evidence = { id: requireString(ctx.values, 'id'), reference: requireString(ctx.values, 'reference') };
      const row = await (action === 'complete' ? rail.inboundTransferArrived(evidence) : rail.inboundTransferFailed(evidence));
      const amount = Number(row.amount);
      return {
        json: { id: row.id, status: row.status, amount, reference: row.settlement_reference },
        text: `inbound transfer ${row.id} ${row.status} (${amount} cents), reference ${row.settlement_reference ?? ''}`,
      };
    },
  };
}

export const inboundTransfersComplete = settleCommand(
  'complete',
  "a production inbound transfer arrived: posts it to its financial account's available balance once, audited with the bank's evidence",
);
export const inboundTransfersFail = settleCommand(
  'fail',
  "a production inbound transfer did not arrive: no money moves; audited with the bank's evidence",
);
