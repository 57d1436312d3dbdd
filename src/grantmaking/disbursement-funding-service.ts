import type { Db } from '../db/database.js';
import { inTransaction, type Executor, type Trx } from '../db/executor.js';
import { prefixedId } from '../db/ids.js';
import type { Environment } from '../db/schema.js';
import { precondition } from '../errors/domain-error.js';
import { holdIsHeld, placeHold } from '../ledger/holds.js';
import { accountBalances, centsOf } from '../ledger/ledger.js';
import { emitEvent } from '../webhooks/outbox.js';
import { openTransfer } from './disbursement-rails.js';
import {
  findDisbursement,
  lockAwaitingBalance,
  lockFinancialAccount,
  updateDisbursement,
  type listDisbursements,
} from './disbursements-repository.js';
import { insertInboundTransfer } from './inbound-transfers-repository.js';

/**
 * A disbursement's money (docs/grantmaking.md, "Disbursements" and "auto_fund"): the balance step
 * after approval and verification, the one step to `submitted` of every path (submitWithHold: the
 * hold placed once, the transfer opened on its rail), the account's `awaiting_balance` queue
 * submitted when money arrives or is freed, and an auto-fund disbursement's inbound transfer,
 * opened with it and, as it completes or fails, submitting or rejecting it. The account's row is
 * locked before the disbursement's, the order approvals take them in.
 */

type DisbursementRow = Awaited<ReturnType<typeof listDisbursements>>[number];
/** A financial account's ledger pair, as its row lock (lockFinancialAccount) reads it. */
export type AccountPair = { available_ledger_account_id: string; held_ledger_account_id: string };

/** The ledger reference of a disbursement's hold and its end (docs/ledger.md, "Holds"). */
const REFERENCE_TYPE = 'disbursement';

/** A disbursement's webhook event, for emitEvent in the transaction of its change. */
export function disbursementEvent(row: DisbursementRow, category: 'disbursement.created' | 'disbursement.updated') {
  return {
    environment: row.environment,
    organizationId: row.organization_id,
    category,
    objectId: row.id,
    objectType: 'disbursement',
  } as const;
}

/** The reference its hold is placed, settled or released by: one hold a disbursement. */
export function holdReference(row: DisbursementRow) {
  return { type: REFERENCE_TYPE, id: row.id };
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
  if (!(await holdIsHeld(trx, row.environment, holdReference(row))))
    await placeHold(trx, {
      environment: row.environment,
      reference: holdReference(row),
      account: { availableAccountId: account.available_ledger_account_id, heldAccountId: account.held_ledger_account_id },
      amount: centsOf(row.amount),
    });
  const transfer = await openTransfer(trx, row);
  if (!transfer && row.status === 'validating_organization')
    throw precondition('The recipient has no usable mailing address for a check: record one (POST /v1/nonprofit_addresses) first.');
  const updated = await updateDisbursement(trx, row.id, { ...changes, status: transfer ? 'submitted' : 'validating_organization' });
  await emitEvent(trx, disbursementEvent(updated, 'disbursement.updated'));
  return updated;
}

/**
 * The balance step, once the recipient is verified (or its verification bypassed): `submitted`
 * when the available balance covers the amount, else `awaiting_balance`, and for an auto-fund
 * disbursement one inbound transfer of its amount opened in the same transaction
 * (docs/grantmaking.md, "auto_fund"). The row's lock keeps it to one transfer; a unique index
 * refuses a second whatever writes it.
 */
export async function balanceStep(trx: Trx, row: DisbursementRow, account: AccountPair): Promise<DisbursementRow> {
  if (await covers(trx, row, account)) return submitWithHold(trx, row, account);
  const updated = await updateDisbursement(trx, row.id, { status: 'awaiting_balance' });
  await emitEvent(trx, disbursementEvent(updated, 'disbursement.updated'));
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

/** An inbound transfer's webhook event (an auto-fund transfer opened here, or canceled with its disbursement). */
export function transferEvent(
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
  await emitEvent(trx, disbursementEvent(updated, 'disbursement.updated'));
}
