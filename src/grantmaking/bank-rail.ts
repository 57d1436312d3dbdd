import type { Db } from '../db/database.js';
import { openProductionTransfers } from './bank-rail-repository.js';
import { resubmitDisbursementAsOperator } from './disbursement-retries-service.js';
import { settleDisbursementAsOperator } from './disbursements-service.js';
import { settleAsOperator } from './inbound-transfers-service.js';

/**
 * The bank rail port (docs/grantmaking.md, "The bank rail port"): the one way production money
 * enters and leaves. Outbound, a bank integration reads the payments to send (`paymentsToSend`);
 * inbound, it reports what the bank says happened, each report naming its evidence (a wire's Fed
 * reference, an ACH trace or return code, a check number). Today an operator is the integration
 * (`admin inbound-transfers …`, `admin disbursements …`, `admin payments pending`); a bank's
 * would call the same functions. Each report is one transaction with its ledger entries, audited,
 * and moves money at most once, however often it is repeated.
 */
export interface Evidence {
  /** The inbound transfer's or disbursement's id. */
  id: string;
  /** What the bank gave as proof: kept on the record and in the audit row (1 to 200 characters). */
  reference: string;
}

export type PaymentToSend = Awaited<ReturnType<typeof openProductionTransfers>>[number];

export interface BankRail {
  /** A grantmaker's inbound transfer arrived: its money becomes available (and funds what waits). */
  inboundTransferArrived(evidence: Evidence): ReturnType<typeof settleAsOperator>;
  /** An inbound transfer did not arrive: no money moves. */
  inboundTransferFailed(evidence: Evidence): ReturnType<typeof settleAsOperator>;
  /** A disbursement's payment reached the recipient (an ACH credit settled, a check deposited). */
  paymentSettled(evidence: Evidence): ReturnType<typeof settleDisbursementAsOperator>;
  /** A payment came back: an ACH return fails it (its hold released); a returned check waits in validating_organization. */
  paymentReturned(evidence: Evidence): ReturnType<typeof settleDisbursementAsOperator>;
  /** A returned or undeliverable check's recipient is resolved: it is paid again on a new transfer. */
  paymentResubmitted(evidence: Evidence): ReturnType<typeof resubmitDisbursementAsOperator>;
  /** A DAF's payment of a DAFpay grant arrived: the grant completes and its money moves once (docs/giving.md, "Money"). */
  grantPaymentArrived(evidence: Evidence): Promise<SettledGrant>;
  /** The DAF canceled a DAFpay grant: no money moves. */
  grantCanceled(evidence: Evidence): Promise<SettledGrant>;
  /** The payments out and not yet ended, oldest first: what the bank is to send or is sending. */
  paymentsToSend(limit?: number): Promise<PaymentToSend[]>;
}

/** The most payments one read returns. */
export const MAX_PAYMENTS_PER_READ = 1000;

/** A DAFpay grant as its settlement answers it. */
export interface SettledGrant {
  id: string;
  status: string;
  amount: string;
}

/**
 * How a DAFpay grant is settled (src/giving/, which builds on grantmaking, hands it in:
 * settleGrantAsOperator; docs/giving.md, "A grant's life").
 */
export type GrantSettlement = (db: Db, outcome: 'complete' | 'cancel', evidence: Evidence) => Promise<SettledGrant>;

export function bankRail(db: Db, grants?: GrantSettlement): BankRail {
  const settleGrant = (outcome: 'complete' | 'cancel', evidence: Evidence) => {
    if (!grants) throw new Error('this bank rail was built without the DAFpay grant settlement');
    return grants(db, outcome, evidence);
  };
  return {
    inboundTransferArrived: (evidence) => settleAsOperator(db, 'complete', evidence),
    inboundTransferFailed: (evidence) => settleAsOperator(db, 'fail', evidence),
    paymentSettled: (evidence) => settleDisbursementAsOperator(db, 'settle', evidence),
    paymentReturned: (evidence) => settleDisbursementAsOperator(db, 'fail', evidence),
    paymentResubmitted: (evidence) => resubmitDisbursementAsOperator(db, evidence),
    grantPaymentArrived: (evidence) => settleGrant('complete', evidence),
    grantCanceled: (evidence) => settleGrant('cancel', evidence),
    paymentsToSend: (limit = MAX_PAYMENTS_PER_READ) => openProductionTransfers(db, Math.min(Math.max(1, limit), MAX_PAYMENTS_PER_READ)),
  };
}
