import { mapUniqueViolation } from '../errors/unique-violation.js';
import { recordAudit } from '../audit/audit-log.js';
import type { Db } from '../db/database.js';
import { inTransaction, type Executor, type Trx } from '../db/executor.js';
import { prefixedId } from '../db/ids.js';
import type { Cursor } from '../db/keyset.js';
import type { DisbursementStatus, DisbursementTransactionDetails, DonationType } from '../db/schema-grantmaking.js';
import { DomainError, invalid, notFound, precondition } from '../errors/domain-error.js';
import { releaseHold, settleHold } from '../ledger/holds.js';
import { centsOf } from '../ledger/ledger.js';
import { emitEvent } from '../webhooks/outbox.js';
import { findProgram, type Scope } from './accounts-repository.js';
import { refuseSelfApproval } from './approval-policy.js';
import { disbursementEvent, holdReference, submitAwaitingBalance, transferEvent } from './disbursement-funding-service.js';
import { latestTransfer, transfersOf as transferAttemptsOf, updateTransfer } from './disbursement-transfers-repository.js';
import { approveLockedRow } from './disbursement-verification-service.js';
import {
  disbursementsAccountOf,
  enabledPrograms,
  findDisbursement,
  findRecipientOrganization,
  insertDisbursement,
  insertDisbursementTransactions,
  listDisbursements,
  lockFinancialAccount,
  programNames,
  transactionsOf,
  updateDisbursement,
  userEmails,
} from './disbursements-repository.js';
import { checkEvidence } from './evidence.js';
import { findTransferOfDisbursement, updateInboundTransferStatus } from './inbound-transfers-repository.js';
import { externalLedgerAccount } from './platform-accounts.js';

/**
 * Disbursements (docs/grantmaking.md, "Disbursements"): created `pending_approval`; approved, they
 * wait for an operator's verification of the recipient (`awaiting_verification`) when it needs
 * one (disbursement-verification-service.ts), then hold their amount on the financial account
 * (`submitted`) or wait for the balance (`awaiting_balance`, with an auto-fund inbound transfer
 * when asked; disbursement-funding-service.ts); a completion settles the hold to the outside
 * world, a failure releases it. Every status change writes `disbursement.updated` in its
 * transaction, with its ledger transfer.
 */

export type DisbursementRow = Awaited<ReturnType<typeof listDisbursements>>[number];
export type DisbursementTransactionRow = Awaited<ReturnType<typeof transactionsOf>>[number];
export type DisbursementTransferRow = Awaited<ReturnType<typeof transferAttemptsOf>>[number];

/** A disbursement with what its published shape shows beside its row. */
export interface DisbursementRecord {
  row: DisbursementRow;
  transactions: DisbursementTransactionRow[];
  /** Its payment attempts, oldest first (docs/grantmaking.md, "Rails and transfers"). */
  transfers: DisbursementTransferRow[];
  programName: string | undefined;
  /** The e-mail of each `user:<id>` who approved, canceled or stopped it, by that actor string. */
  actorEmails: ReadonlyMap<string, string>;
}

/** The largest disbursement, in cents ($100,000,000): the inbound transfers' maximum, for the same reason. */
export const MAX_DISBURSEMENT_CENTS = 10_000_000_000;
/** At most this many transactions: their sum stays far inside JavaScript's safe integers. */
export const MAX_TRANSACTIONS = 1000;

/** The states a grantmaker may cancel from: before the payment is submitted (no hold yet). */
const CANCELABLE: readonly DisbursementStatus[] = ['pending_approval', 'awaiting_balance'];

export interface TransactionInput {
  amount: number;
  feeAmount?: number | null;
  type: DonationType;
  internalTransactionId?: string;
  purpose?: string;
  note?: string;
  recipientName?: string;
  details?: DisbursementTransactionDetails;
}

export interface CreateDisbursementInput {
  organizationId: string;
  programId?: string | null;
  amount: number;
  description?: string;
  transactions: readonly TransactionInput[];
  idempotencyKey?: string;
  /** The configured largest amount (max_disbursement_cents), at most MAX_DISBURSEMENT_CENTS. */
  maxAmount?: number;
  /** Just-in-time funding (docs/grantmaking.md, "auto_fund"). */
  autoFund?: boolean;
  /** bypass_chariot_organization_verification (docs/grantmaking.md, "Verification"). */
  bypassVerification?: boolean;
}

/** The amounts of a create request: each a positive whole number of cents, the nets summing to the amount. */
export function checkAmounts(input: Pick<CreateDisbursementInput, 'amount' | 'transactions' | 'maxAmount'>): void {
  const max = Math.min(input.maxAmount ?? MAX_DISBURSEMENT_CENTS, MAX_DISBURSEMENT_CENTS);
  if (!Number.isSafeInteger(input.amount) || input.amount <= 0) throw invalid('amount: must be a positive whole number of cents');
  if (input.amount > max) throw invalid(`amount: must be at most ${max} cents, the largest disbursement allowed`);
  if (!Array.isArray(input.transactions) || input.transactions.length === 0) throw invalid('transactions: at least one is required');
  if (input.transactions.length > MAX_TRANSACTIONS) throw invalid(`transactions: at most ${MAX_TRANSACTIONS}`);
  let net = 0;
  for (const [i, t] of input.transactions.entries()) {
    if (!Number.isSafeInteger(t.amount) || t.amount <= 0 || t.amount > MAX_DISBURSEMENT_CENTS)
      throw invalid(`transactions[${i}].amount: must be a positive whole number of cents, at most ${MAX_DISBURSEMENT_CENTS}`);
    const fee = t.feeAmount ?? 0;
    if (!Number.isSafeInteger(fee) || fee < 0 || fee >= t.amount)
      throw invalid(`transactions[${i}].fee_amount: must be a whole number of cents from 0 to less than the transaction's amount`);
    net += t.amount - fee;
  }
  if (net !== input.amount)
    throw invalid(`transactions: their net amounts (amount - fee_amount) sum to ${net}, not to the disbursement's amount ${input.amount}`);
}

/** The program a disbursement belongs to: the one named (the grantmaker's, enabled), or the only enabled one. */
async function programFor(trx: Executor, scope: Scope, programId: string | null | undefined): Promise<string> {
  if (programId !== undefined && programId !== null) {
    // The published create has no 404: a program that is not the caller's is a bad program_id.
    const program = await findProgram(trx, scope, programId);
    if (!program) throw invalid(`program_id: no program ${programId} of yours in ${scope.environment}`);
    if (program.grant_disbursement_status !== 'enabled') throw invalid(`program_id: program ${programId} has grant disbursements disabled`);
    return program.id;
  }
  const enabled = await enabledPrograms(trx, scope);
  if (enabled.length === 0) throw invalid('program_id: you have no program with grant disbursements enabled');
  if (enabled.length > 1) throw invalid('program_id: required, since you have more than one program with grant disbursements enabled');
  return enabled[0]!.id;
}

export async function recordsOf(db: Executor, rows: DisbursementRow[]): Promise<DisbursementRecord[]> {
  const ids = rows.map((r) => r.id);
  const actors = rows.flatMap((r) => [r.approved_by, r.canceled_by, r.stopped_by]).filter((a) => a?.startsWith('user:'));
  const [transactions, transfers, programs, users] = await Promise.all([
    transactionsOf(db, ids),
    transferAttemptsOf(db, ids),
    programNames(db, [...new Set(rows.map((r) => r.program_id))]),
    userEmails(db, [...new Set(actors.map((a) => a!.slice('user:'.length)))]),
  ]);
  const names = new Map(programs.map((p) => [p.id, p.name]));
  const actorEmails = new Map(users.map((u) => [`user:${u.id}`, u.email]));
  return rows.map((row) => ({
    row,
    transactions: transactions.filter((t) => t.disbursement_id === row.id),
    transfers: transfers.filter((t) => t.disbursement_id === row.id),
    programName: names.get(row.program_id),
    actorEmails,
  }));
}

async function recordOf(db: Executor, row: DisbursementRow): Promise<DisbursementRecord> {
  return (await recordsOf(db, [row]))[0]!;
}

/** `pending_approval`, with its transactions and `disbursement.created`, in one transaction. */
export async function createDisbursement(
  db: Db,
  scope: Scope,
  createdBy: string,
  input: CreateDisbursementInput,
): Promise<DisbursementRecord> {
  checkAmounts(input);
  return inTransaction(db, async (trx) => {
    // The published create has no 404: an unknown recipient is a bad organization_id.
    const recipient = await findRecipientOrganization(trx, input.organizationId);
    if (!recipient) throw invalid(`organization_id: no organization ${input.organizationId}`);
    const programId = await programFor(trx, scope, input.programId);
    const account = await disbursementsAccountOf(trx, scope);
    if (!account) throw new Error(`grantmaker ${scope.organizationId} has no disbursements account in ${scope.environment}`);
    let row: DisbursementRow;
    try {
      row = await inTransaction(trx, (inner) =>
        insertDisbursement(inner, {
          id: prefixedId('disbursement'),
          environment: scope.environment,
          organization_id: scope.organizationId,
          financial_account_id: account.id,
          program_id: programId,
          recipient_organization_id: recipient.id,
          amount: input.amount,
          description: input.description ?? null,
          idempotency_key: input.idempotencyKey ?? null,
          created_by: createdBy,
          auto_fund: input.autoFund ?? false,
          bypass_organization_verification: input.bypassVerification ?? false,
        }),
      );
    } catch (error) {
      // Past the key's replay window the same key runs afresh: one disbursement per key still.
      mapUniqueViolation(error, {
        disbursements_idempotency_key:
          'A disbursement was already created with this Idempotency-Key; send a new key for a new disbursement.',
      });
    }
    await insertDisbursementTransactions(
      trx,
      input.transactions.map((t, position) => ({
        id: prefixedId('transaction'),
        disbursement_id: row.id,
        position,
        amount: t.amount,
        fee_amount: t.feeAmount ?? null,
        type: t.type,
        internal_transaction_id: t.internalTransactionId ?? null,
        purpose: t.purpose ?? null,
        note: t.note ?? null,
        recipient_name: t.recipientName ?? null,
        details: JSON.stringify(t.details ?? {}),
      })),
    );
    await emitEvent(trx, disbursementEvent(row, 'disbursement.created'));
    return recordOf(trx, row);
  });
}

export async function disbursementsPage(
  db: Db,
  scope: Scope,
  filter: { recipientOrganizationId?: string; idempotencyKey?: string },
  cursor: Cursor | undefined,
  limit: number,
): Promise<DisbursementRecord[]> {
  return recordsOf(db, await listDisbursements(db, scope, filter, cursor, limit));
}

export async function disbursementOf(db: Db, scope: Scope, id: string): Promise<DisbursementRecord | undefined> {
  const row = await findDisbursement(db, scope, id);
  return row ? recordOf(db, row) : undefined;
}

/**
 * `pending_approval` → `submitted` (its amount held) or `awaiting_balance` (no hold), under the
 * account's lock and then the disbursement's: concurrent approvals of one disbursement make one
 * transition (the later ones see its new status), and of many never hold more than is available.
 */
export async function approveDisbursement(db: Db, scope: Scope, approvedBy: string, id: string): Promise<DisbursementRecord> {
  return inTransaction(db, async (trx) => {
    const seen = await findDisbursement(trx, scope, id);
    if (!seen) throw notFound('The disbursement was not found.');
    const account = await lockFinancialAccount(trx, seen.environment, seen.financial_account_id);
    const row = (await findDisbursement(trx, scope, id, true))!;
    // The published operation answers a disbursement in another state with 400.
    if (row.status !== 'pending_approval') throw invalid(`The disbursement is ${row.status}; only a pending_approval one can be approved.`);
    await refuseSelfApproval(trx, row.organization_id, [row], approvedBy);
    return recordOf(trx, await approveLockedRow(trx, row, account, approvedBy));
  });
}

/**
 * `pending_approval` or `awaiting_balance` → `canceled`: neither has a hold, so no money moves. An
 * auto-fund disbursement's pending transfer is canceled with it (docs/grantmaking.md, "auto_fund").
 */
export async function cancelDisbursement(db: Db, scope: Scope, id: string, canceledBy?: string): Promise<DisbursementRecord> {
  const attempt = () =>
    inTransaction(db, async (trx) => {
      const seen = await findDisbursement(trx, scope, id);
      if (!seen) throw notFound('The disbursement was not found.');
      // The transfer's lock before the disbursement's: the order its completion takes them in.
      const transfer = seen.auto_fund ? await findTransferOfDisbursement(trx, id, true) : undefined;
      const row = (await findDisbursement(trx, scope, id, true))!;
      // An approval opened its transfer between the two reads: again, with the transfer's lock first.
      if (row.auto_fund && row.status === 'awaiting_balance' && transfer === undefined) return undefined;
      // The published operation answers a disbursement in another state with 400.
      if (!CANCELABLE.includes(row.status))
        throw invalid(`The disbursement is ${row.status}; only a pending_approval or awaiting_balance one can be canceled.`);
      const updated = await updateDisbursement(trx, id, {
        status: 'canceled',
        canceled_at: new Date(),
        ...(canceledBy !== undefined ? { canceled_by: canceledBy } : {}),
      });
      await emitEvent(trx, disbursementEvent(updated, 'disbursement.updated'));
      if (transfer?.status === 'pending') {
        const canceled = await updateInboundTransferStatus(trx, transfer.id, { status: 'canceled' });
        await emitEvent(trx, transferEvent(canceled, 'inbound_transfer.updated'));
      }
      return recordOf(trx, updated);
    });
  // The second attempt finds the transfer the first missed: an approval happens once.
  return (await attempt()) ?? (await attempt())!;
}

/** Who ends a payment: the sandbox simulations (the grantmaker's scope), or an operator by id with the bank's evidence (production). */
type Settler = { scope: Scope } | { operator: { reference: string } };

/** How a payment ended: the disbursement's new status and the operator's audit row. */
interface Ending {
  status: 'completed' | 'failed' | 'validating_organization';
  audit: 'disbursement.completed' | 'disbursement.failed' | 'disbursement.returned';
}

/**
 * A submitted disbursement's payment ends: `end` moves its transfer and its hold, in the
 * transaction of the status change (docs/grantmaking.md, "Rails and transfers").
 */
async function endSubmitted(
  db: Db,
  settler: Settler,
  id: string,
  action: 'completed' | 'failed',
  end: (trx: Trx, row: DisbursementRow, transfer: DisbursementTransferRow | undefined) => Promise<Ending>,
): Promise<DisbursementRow> {
  const where = 'scope' in settler ? settler.scope : { environment: 'production' as const };
  return inTransaction(db, async (trx) => {
    const row = await findDisbursement(trx, where, id, true);
    if (!row) throw notFound('The disbursement was not found.');
    if (row.status !== 'submitted') throw precondition(`The disbursement is ${row.status}; only a submitted one can be ${action}.`);
    const transfer = await latestTransfer(trx, row.id);
    const ending = await end(trx, row, transfer);
    const updated = await updateDisbursement(trx, id, {
      status: ending.status,
      ...('operator' in settler ? { settlement_reference: settler.operator.reference } : {}),
    });
    await emitEvent(trx, disbursementEvent(updated, 'disbursement.updated'));
    if ('operator' in settler)
      await recordAudit(trx, {
        event: ending.audit,
        environment: row.environment,
        organizationId: row.organization_id,
        details: {
          disbursement_id: row.id,
          amount: centsOf(row.amount),
          reference: settler.operator.reference,
          ...(transfer ? { transfer_id: transfer.id } : {}),
          via: 'admin_cli',
        },
      });
    return updated;
  });
}

/** Each rail's word for a payment that arrived (the published transfers' statuses). */
const ARRIVED = { check: 'deposited', ach: 'completed', account: 'complete' } as const;

/** The payment arrived: the transfer completes and the hold settles to the environment's external account (the money left). */
export async function completeDisbursement(db: Db, settler: Settler, id: string): Promise<DisbursementRow> {
  return endSubmitted(db, settler, id, 'completed', async (trx, row, transfer) => {
    if (transfer) await updateTransfer(trx, transfer.id, { status: ARRIVED[transfer.rail], completed_at: new Date() });
    await settleHold(trx, {
      environment: row.environment,
      reference: holdReference(row),
      destinationAccountId: await externalLedgerAccount(trx, row.environment),
    });
    return { status: 'completed', audit: 'disbursement.completed' };
  });
}

/**
 * The payment failed. An ACH credit is returned: the disbursement fails, its hold is released to
 * the available balance once (the ledger's hold-end uniqueness), and the money freed then submits
 * what waits for it, in a transaction of its own. A check is returned: the disbursement goes back
 * to `validating_organization` with its hold kept, for a retry once the recipient's information
 * is resolved. An account transfer does not fail (the published simulation names ACH and checks).
 */
export async function failDisbursement(db: Db, settler: Settler, id: string): Promise<DisbursementRow> {
  const row = await endSubmitted(db, settler, id, 'failed', async (trx, r, transfer) => {
    if (transfer?.rail === 'account')
      throw invalid('The disbursement is paid by an account transfer, which cannot fail; only an ACH or check payment can.');
    if (transfer) await updateTransfer(trx, transfer.id, { status: 'returned', returned_at: new Date() });
    if (transfer?.rail === 'check') return { status: 'validating_organization', audit: 'disbursement.returned' };
    await releaseHold(trx, { environment: r.environment, reference: holdReference(r) });
    return { status: 'failed', audit: 'disbursement.failed' };
  });
  if (row.status === 'failed') await submitAwaitingBalance(db, row.environment, row.financial_account_id);
  return row;
}

/**
 * The production rail (docs/grantmaking.md, "Disbursements"): an operator holding the bank's
 * evidence settles or fails a submitted production disbursement, through the simulations' calls.
 */
export async function settleDisbursementAsOperator(
  db: Db,
  action: 'settle' | 'fail',
  input: { id: string; reference: string },
): Promise<DisbursementRow> {
  const settler: Settler = { operator: { reference: checkEvidence(input.reference) } };
  try {
    return await (action === 'settle' ? completeDisbursement : failDisbursement)(db, settler, input.id);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'not_found')
      throw notFound(`no production disbursement ${input.id} (a sandbox disbursement is settled by its simulations)`);
    throw error;
  }
}
