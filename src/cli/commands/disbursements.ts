import { optionalString, requireString, UsageError, type Command } from './command.js';

/**
 * The production rail of disbursements (docs/grantmaking.md, "The bank rail port"): an operator
 * with the bank's evidence settles or fails a submitted production disbursement.
 */
function settleCommand(action: 'settle' | 'fail', summary: string): Command {
  return {
    path: ['disbursements', action],
    summary,
    usage: `disbursements ${action} --id <disbursement id> --reference <the bank's evidence>`,
    options: { id: { type: 'string' }, reference: { type: 'string' } },
    async run(ctx) {
      const { bankRail } = await import('../../grantmaking/bank-rail.js');
      const rail = bankRail(await ctx.db());
      const evidence = { id: requireString(ctx.values, 'id'), reference: requireString(ctx.values, 'reference') };
      const row = await (action === 'settle' ? rail.paymentSettled(evidence) : rail.paymentReturned(evidence));
      const amount = Number(row.amount);
      return {
        json: { id: row.id, status: row.status, amount, reference: row.settlement_reference },
        text: `disbursement ${row.id} ${row.status} (${amount} cents), reference ${row.settlement_reference ?? ''}`,
      };
    },
  };
}

export const disbursementsSettle = settleCommand(
  'settle',
  "a production disbursement was paid: its hold leaves the financial account once, audited with the bank's evidence",
);
export const disbursementsFail = settleCommand(
  'fail',
  "a production disbursement's payment failed: its hold returns to the available balance once, audited with the bank's evidence",
);

export const disbursementsResubmit: Command = {
  path: ['disbursements', 'resubmit'],
  summary:
    "a production disbursement held in validating_organization (a returned check, or no mailing address) is paid again on a new transfer once the recipient's information is resolved, its hold kept, audited with why",
  usage: 'disbursements resubmit --id <disbursement id> --reference <why it can be paid now>',
  options: { id: { type: 'string' }, reference: { type: 'string' } },
  async run(ctx) {
    const { bankRail } = await import('../../grantmaking/bank-rail.js');
    const row = await bankRail(await ctx.db()).paymentResubmitted({
      id: requireString(ctx.values, 'id'),
      reference: requireString(ctx.values, 'reference'),
    });
    const amount = Number(row.amount);
    return { json: { id: row.id, status: row.status, amount }, text: `disbursement ${row.id} ${row.status} (${amount} cents)` };
  },
};

/** The operator's verification of a disbursement's recipient (docs/grantmaking.md, "Verification"). */
export const disbursementsVerify: Command = {
  path: ['disbursements', 'verify'],
  summary:
    "an awaiting_verification disbursement's recipient is verified: it goes on to submitted (its amount held) or awaiting_balance, audited",
  usage: 'disbursements verify --id <disbursement id>',
  options: { id: { type: 'string' } },
  async run(ctx) {
    const { verifyDisbursement } = await import('../../grantmaking/disbursement-verification-service.js');
    const row = await verifyDisbursement(await ctx.db(), requireString(ctx.values, 'id'));
    return {
      json: { id: row.id, status: row.status, verified_at: row.verified_at?.toISOString() },
      text: `disbursement ${row.id} verified: ${row.status}`,
    };
  },
};

export const disbursementsReject: Command = {
  path: ['disbursements', 'reject'],
  summary:
    'an awaiting_verification disbursement is refused: rejected with its reason (incorrect_recipient, suspected_fraud, requested_by_user, acceptance_criteria_failed, duplicate, insufficient_funds, unknown), no money moves, audited',
  usage: 'disbursements reject --id <disbursement id> --reason <DisbursementRejection reason>',
  options: { id: { type: 'string' }, reason: { type: 'string' } },
  async run(ctx) {
    const { rejectDisbursement } = await import('../../grantmaking/disbursement-verification-service.js');
    const row = await rejectDisbursement(await ctx.db(), {
      id: requireString(ctx.values, 'id'),
      reason: requireString(ctx.values, 'reason'),
    });
    return {
      json: { id: row.id, status: row.status, reason: row.rejection_reason },
      text: `disbursement ${row.id} rejected (${row.rejection_reason ?? ''})`,
    };
  },
};

/** The bank rail port's outbound side (docs/grantmaking.md, "The bank rail port"): what to pay. */
export const paymentsPending: Command = {
  path: ['payments', 'pending'],
  summary: 'the production payments out and not yet ended (checks to mail, ACH credits and account transfers to send), oldest first',
  usage: 'payments pending [--limit <1-1000>]',
  options: { limit: { type: 'string' } },
  async run(ctx) {
    const { bankRail, MAX_PAYMENTS_PER_READ } = await import('../../grantmaking/bank-rail.js');
    const raw = optionalString(ctx.values, 'limit');
    const limit = raw === undefined ? MAX_PAYMENTS_PER_READ : Number(raw);
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAYMENTS_PER_READ)
      throw new UsageError(`--limit must be a whole number from 1 to ${MAX_PAYMENTS_PER_READ}`);
    const payments = (await bankRail(await ctx.db()).paymentsToSend(limit)).map((p) => ({
      transfer_id: p.transfer_id,
      disbursement_id: p.disbursement_id,
      rail: p.rail,
      status: p.status,
      amount: Number(p.amount),
      grantmaker: p.grantmaker_name,
      recipient_organization_id: p.recipient_organization_id,
      ...(p.rail === 'check'
        ? { check_number: p.check_number, recipient_name: p.recipient_name, memo: p.memo, mailing_address: p.mailing_address }
        : {}),
      created_at: p.created_at.toISOString(),
    }));
    return {
      json: { payments },
      text:
        payments
          .map(
            (p) => `${p.created_at}  ${p.rail.padEnd(7)}  ${String(p.amount).padStart(12)} cents  ${p.disbursement_id}  ${p.transfer_id}`,
          )
          .join('\n') || '(no payments pending)',
    };
  },
};
