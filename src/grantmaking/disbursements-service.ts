import { mapUniqueViolation } from '../errors/unique-violation.js';
import { recordAudit } from '../audit/audit-log.js';
import type { Db } from '../db/database.js';
import { inTransaction, type Executor, type Trx } from '../db/executor.js';
import { prefixedId } from '../db/ids.js';
import type { Cursor } from '../db/keyset.js';
import type { Environment } from '../db/schema.js';
import {
  REJECTION_REASONS,
  type DisbursementStatus,
  type DisbursementTransactionDetails,
  type DonationType,
  type RejectionReason,
} from '../db/schema-grantmaking.js';
import { DomainError, invalid, notFound, precondition } from '../errors/domain-error.js';
import { holdIsHeld, placeHold, releaseHold, settleHold } from '../ledger/holds.js';
import { accountBalances, centsOf } from '../ledger/ledger.js';
import { emitEvent } from '../webhooks/outbox.js';
import { findProgram, type Scope } from './accounts-repository.js';
import { refuseSelfApproval } from './approval-policy.js';
import { openTransfer } from './disbursement-rails.js';
import { latestTransfer, transfersOf as transferAttemptsOf, updateTransfer } from './disbursement-transfers-repository.js';
import {
  disbursementsAccountOf,
  enabledPrograms,
  findAnyDisbursement,
  findDisbursement,
  findRecipientOrganization,
  insertDisbursement,
  insertDisbursementTransactions,
  isEligibleRecipient,
  listDisbursements,
  lockAwaitingBalance,
  lockFinancialAccount,
  programNames,
  transactionsOf,
  updateDisbursement,
  userEmails,
} from './disbursements-repository.js';
import { checkEvidence } from './evidence.js';
import { findTransferOfDisbursement, insertInboundTransfer, updateInboundTransferStatus } from './inbound-transfers-repository.js';
import { externalLedgerAccount } from './platform-accounts.js';

/**
 * Disbursements (docs/grantmaking.md, "Disbursements"): created `pending_approval`; approved, they
 * wait for an operator's verification of the recipient (`awaiting_verification`) when it needs
 * one, then hold their amount on the financial account (`submitted`) or wait for the balance
 * (`awaiting_balance`, with an auto-fund inbound transfer when asked); a completion settles the
 * hold to the outside world, a failure releases it. Every status change writes
 * `disbursement.updated` in its transaction, with its ledger transfer.
 */

export type DisbursementRow = Awaited<ReturnType<typeof listDisbursements>>[number];
export type DisbursementTransactionRow = Awaited<ReturnType<typeof transactionsOf>>[number];
export type DisbursementTransferRow = Awaited<ReturnType<typeof transferAttemptsOf>>[number];
/** A financial account's ledger pair, as its row lock (lockFinancialAccount) reads it. */
type AccountPair = { available_ledger_account_id: string; held_ledger_account_id: string };

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

/** The ledger reference of a disbursement's hold and its end (docs/ledger.md, "Holds"). */
const REFERENCE_TYPE = 'disbursement';

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

function event(row: DisbursementRow, category: 'disbursement.created' | 'disbursement.updated') {
  return {
    environment: row.environment,
    organizationId: row.organization_id,
    category,
    objectId: row.id,
    objectType: 'disbursement',
  } as const;
}

function reference(row: DisbursementRow) {
  return { type: REFERENCE_TYPE, id: row.id };
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
    await emitEvent(trx, event(row, 'disbursement.created'));
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
 * Whether the account's available balance covers the disbursement. Called with the account's row
 * locked (lockFinancialAccount), so the balance read is the one the hold then meets.
 */
async function covers(trx: Trx, row: DisbursementRow, pair: AccountPair): Promise<boolean> {
  const balances = await accountBalances(trx, [pair.available_ledger_account_id]);
  return balances.get(pair.available_ledger_account_id)! >= centsOf(row.amount);
}

/**
 * The one step to `submitted`, of every path (an approval, a deposit covering a waiting one, a
 * retry): the amount is held on the account (unless a returned check's hold is still held), the
 * transfer opens on the recipient's rail (disbursement-rails.ts) and `disbursement.updated` is
 * written, all in the caller's transaction, with the account's row and the disbursement's locked.
 * A check with no usable mailing address leaves it `validating_organization`, the hold kept
 * (docs/grantmaking.md, "Rails and transfers"); a retry that would stay there is refused.
 */
export async function submitWithHold(
  trx: Trx,
  row: DisbursementRow,
  account: AccountPair,
  changes: { approved_by?: string; approved_at?: Date } = {},
): Promise<DisbursementRow> {
  if (!(await holdIsHeld(trx, row.environment, reference(row))))
    await placeHold(trx, {
      environment: row.environment,
      reference: reference(row),
      account: { availableAccountId: account.available_ledger_account_id, heldAccountId: account.held_ledger_account_id },
      amount: centsOf(row.amount),
    });
  const transfer = await openTransfer(trx, row);
  if (!transfer && row.status === 'validating_organization')
    throw precondition('The recipient has no usable mailing address for a check: record one (POST /v1/nonprofit_addresses) first.');
  const updated = await updateDisbursement(trx, row.id, { ...changes, status: transfer ? 'submitted' : 'validating_organization' });
  await emitEvent(trx, event(updated, 'disbursement.updated'));
  return updated;
}

/**
 * The balance step, once the recipient is verified (or its verification bypassed): `submitted`
 * when the available balance covers the amount, else `awaiting_balance`, and for an auto-fund
 * disbursement one inbound transfer of its amount opened in the same transaction
 * (docs/grantmaking.md, "auto_fund"). The row's lock keeps it to one transfer; a unique index
 * refuses a second whatever writes it.
 */
async function balanceStep(trx: Trx, row: DisbursementRow, account: AccountPair): Promise<DisbursementRow> {
  if (await covers(trx, row, account)) return submitWithHold(trx, row, account);
  const updated = await updateDisbursement(trx, row.id, { status: 'awaiting_balance' });
  await emitEvent(trx, event(updated, 'disbursement.updated'));
  if (row.auto_fund) {
    const transfer = await insertInboundTransfer(trx, {
      id: prefixedId('inbound_transfer'),
      environment: row.environment,
      organization_id: row.organization_id,
      financial_account_id: row.financial_account_id,
      amount: centsOf(row.amount),
      description: `Funding for disbursement ${row.id}`,
      disbursement_id: row.id,
    });
    await emitEvent(trx, transferEvent(transfer, 'inbound_transfer.created'));
  }
  return updated;
}

function transferEvent(
  transfer: { id: string; environment: Environment; organization_id: string },
  category: 'inbound_transfer.created' | 'inbound_transfer.updated',
) {
  return {
    environment: transfer.environment,
    organizationId: transfer.organization_id,
    category,
    objectId: transfer.id,
    objectType: 'inbound_transfer',
  } as const;
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
 * The step of every approval, one or in bulk: a `pending_approval` row, locked after its account,
 * waits in `awaiting_verification` when its recipient needs an operator's verification and the
 * grantmaker did not bypass it (docs/grantmaking.md, "Verification"); otherwise it goes through
 * the balance step. An eligible recipient is verified at approval (`verified_at`). One
 * `disbursement.updated` in the same transaction.
 */
export async function approveLockedRow(trx: Trx, row: DisbursementRow, account: AccountPair, approvedBy: string): Promise<DisbursementRow> {
  const now = new Date();
  const eligible = await isEligibleRecipient(trx, row.recipient_organization_id);
  if (!eligible && !row.bypass_organization_verification) {
    const waiting = await updateDisbursement(trx, row.id, { status: 'awaiting_verification', approved_by: approvedBy, approved_at: now });
    await emitEvent(trx, event(waiting, 'disbursement.updated'));
    return waiting;
  }
  const approved = await updateDisbursement(trx, row.id, {
    approved_by: approvedBy,
    approved_at: now,
    ...(eligible ? { verified_at: now } : {}),
  });
  return balanceStep(trx, approved, account);
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
      await emitEvent(trx, event(updated, 'disbursement.updated'));
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
    await emitEvent(trx, event(updated, 'disbursement.updated'));
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
      reference: reference(row),
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
    await releaseHold(trx, { environment: r.environment, reference: reference(r) });
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

/**
 * Submits the account's `awaiting_balance` disbursements that its available balance now covers,
 * oldest first, stopping at the first it does not cover (a large one is not passed over by
 * smaller later ones). Runs in the caller's transaction (an inbound transfer's completion), or
 * one of its own; the account's lock is taken first, as approvals take it.
 */
export async function submitAwaitingBalance(executor: Executor, environment: Environment, financialAccountId: string): Promise<string[]> {
  const run = async (trx: Trx) => {
    const account = await lockFinancialAccount(trx, environment, financialAccountId);
    const submitted: string[] = [];
    for (const row of await lockAwaitingBalance(trx, environment, financialAccountId)) {
      if (!(await covers(trx, row, account))) break;
      await submitWithHold(trx, row, account);
      submitted.push(row.id);
    }
    return submitted;
  };
  return executor.isTransaction ? run(executor as Trx) : inTransaction(executor as Db, run);
}

/** Locks the financial account an inbound transfer funds before it posts: the order approvals take. */
export async function lockAccountForDeposit(trx: Executor, environment: Environment, financialAccountId: string): Promise<void> {
  await lockFinancialAccount(trx, environment, financialAccountId);
}

/**
 * An auto-fund transfer completed (docs/grantmaking.md, "auto_fund"): in its transaction, after its
 * deposit and before the account's awaiting queue, its disbursement, still `awaiting_balance`, is
 * submitted with the money it brought. The account is locked already (lockAccountForDeposit).
 */
export async function submitAutoFunded(trx: Trx, environment: Environment, disbursementId: string): Promise<void> {
  const seen = await findDisbursement(trx, { environment }, disbursementId);
  if (!seen) throw new Error(`auto-fund transfer of a missing disbursement ${disbursementId}`);
  const account = await lockFinancialAccount(trx, environment, seen.financial_account_id);
  const row = (await findDisbursement(trx, { environment }, disbursementId, true))!;
  if (row.status === 'awaiting_balance') await submitWithHold(trx, row, account);
}

/**
 * An auto-fund transfer failed or was canceled: its disbursement, still `awaiting_balance`, is
 * `rejected` for `insufficient_funds` in the transaction of the transfer's change (the money it
 * waited for will not come; docs/grantmaking.md, "auto_fund").
 */
export async function rejectUnfunded(trx: Trx, environment: Environment, disbursementId: string): Promise<void> {
  const row = await findDisbursement(trx, { environment }, disbursementId, true);
  if (row?.status !== 'awaiting_balance') return;
  const updated = await updateDisbursement(trx, row.id, {
    status: 'rejected',
    rejection_reason: 'insufficient_funds',
    rejected_at: new Date(),
  });
  await emitEvent(trx, event(updated, 'disbursement.updated'));
}

/** An operator's decision on an `awaiting_verification` disbursement, by id, in either environment. */
async function decideVerification(
  db: Db,
  id: string,
  decide: (trx: Trx, row: DisbursementRow, account: AccountPair) => Promise<DisbursementRow>,
  audit: (row: DisbursementRow) => { event: 'disbursement.verified' | 'disbursement.rejected'; details: Record<string, unknown> },
): Promise<DisbursementRow> {
  return inTransaction(db, async (trx) => {
    const seen = await findAnyDisbursement(trx, id);
    if (!seen) throw notFound(`no disbursement ${id}`);
    // The account's lock before the row's, as approvals take them: verifying may place a hold.
    const account = await lockFinancialAccount(trx, seen.environment, seen.financial_account_id);
    const row = (await findAnyDisbursement(trx, id, true))!;
    if (row.status !== 'awaiting_verification')
      throw precondition(`The disbursement is ${row.status}; only an awaiting_verification one can be verified or rejected.`);
    const decided = await decide(trx, row, account);
    const { event: kind, details } = audit(decided);
    await recordAudit(trx, {
      event: kind,
      environment: row.environment,
      organizationId: row.organization_id,
      details: { disbursement_id: row.id, amount: centsOf(row.amount), ...details, via: 'admin_cli' },
    });
    return decided;
  });
}

/**
 * `admin disbursements verify` (docs/grantmaking.md, "Verification"): the operator verified the
 * recipient; `verified_at` is set and the balance step follows (`submitted` or `awaiting_balance`,
 * an auto-fund transfer when asked), audited, in one transaction.
 */
export function verifyDisbursement(db: Db, id: string): Promise<DisbursementRow> {
  return decideVerification(
    db,
    id,
    async (trx, row, account) => balanceStep(trx, await updateDisbursement(trx, row.id, { verified_at: new Date() }), account),
    (row) => ({ event: 'disbursement.verified', details: { status: row.status } }),
  );
}

/** `admin disbursements reject`: the operator refused the recipient; `rejected` with its reason, audited. No money had moved. */
export async function rejectDisbursement(db: Db, input: { id: string; reason: string }): Promise<DisbursementRow> {
  const reason = input.reason as RejectionReason;
  if (!REJECTION_REASONS.includes(reason)) throw invalid(`--reason: one of ${REJECTION_REASONS.join(', ')}`);
  return decideVerification(
    db,
    input.id,
    async (trx, row) => {
      const updated = await updateDisbursement(trx, row.id, { status: 'rejected', rejection_reason: reason, rejected_at: new Date() });
      await emitEvent(trx, event(updated, 'disbursement.updated'));
      return updated;
    },
    () => ({ event: 'disbursement.rejected', details: { reason } }),
  );
}
