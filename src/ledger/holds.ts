import { invalid, notFound } from '../errors/domain-error.js';
import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import { centsOf, ledgerAccounts, postTransfer, type FinancialAccountPair, type PostedTransfer, type TransferReference } from './ledger.js';
import * as repo from './ledger-repository.js';

/**
 * Holds as transfers (docs/ledger.md, "Holds"): placing one moves money from a financial
 * account's available part to its held part; it ends once, released back or settled to a
 * destination, for the whole amount held. The hold's reference (e.g. the disbursement) names
 * all three transfers, so each happens at most once and a hold never ends twice.
 */

export async function placeHold(
  executor: Executor,
  input: { environment: Environment; reference: TransferReference; account: FinancialAccountPair; amount: number },
): Promise<PostedTransfer> {
  if (!Number.isSafeInteger(input.amount) || input.amount <= 0) throw invalid('a hold is a positive whole number of cents');
  const { availableAccountId, heldAccountId } = input.account;
  const accounts = await ledgerAccounts(executor, [availableAccountId, heldAccountId]);
  const available = accounts.get(availableAccountId)!;
  const held = accounts.get(heldAccountId)!;
  if (available.purpose !== 'available' || held.purpose !== 'held' || available.organizationId !== held.organizationId)
    throw invalid(`ledger accounts ${availableAccountId} and ${heldAccountId} are not one financial account's available and held parts`);
  return postTransfer(executor, {
    environment: input.environment,
    kind: 'hold',
    reference: input.reference,
    entries: [
      { accountId: availableAccountId, amount: -input.amount },
      { accountId: heldAccountId, amount: input.amount },
    ],
  });
}

/** The hold placed for `reference`: its held account, where it came from, and its amount. */
async function holdOf(executor: Executor, environment: Environment, reference: TransferReference) {
  const [hold] = await repo.findTransfersOfReference(executor, {
    environment,
    kinds: ['hold'],
    referenceType: reference.type,
    referenceId: reference.id,
  });
  if (!hold) throw notFound(`no hold for ${reference.type} ${reference.id} in ${environment}`);
  const entries = await repo.entriesOfTransfer(executor, hold.id);
  const from = entries.find((e) => centsOf(e.amount) < 0);
  const to = entries.find((e) => centsOf(e.amount) > 0);
  if (entries.length !== 2 || !from || !to) throw new Error(`hold transfer ${hold.id} is not two entries`);
  return { availableAccountId: from.account_id, heldAccountId: to.account_id, amount: centsOf(to.amount) };
}

/** Held → available, the whole hold; AlreadyPosted when the hold has ended (released or settled). */
export async function releaseHold(
  executor: Executor,
  input: { environment: Environment; reference: TransferReference },
): Promise<PostedTransfer> {
  const hold = await holdOf(executor, input.environment, input.reference);
  return postTransfer(executor, {
    environment: input.environment,
    kind: 'hold_release',
    reference: input.reference,
    entries: [
      { accountId: hold.heldAccountId, amount: -hold.amount },
      { accountId: hold.availableAccountId, amount: hold.amount },
    ],
  });
}

/** Held → destination (e.g. the settlement account), the whole hold; AlreadyPosted when the hold has ended. */
export async function settleHold(
  executor: Executor,
  input: { environment: Environment; reference: TransferReference; destinationAccountId: string },
): Promise<PostedTransfer> {
  const hold = await holdOf(executor, input.environment, input.reference);
  if (input.destinationAccountId === hold.heldAccountId) throw invalid('a hold settles to an account other than its held account');
  return postTransfer(executor, {
    environment: input.environment,
    kind: 'hold_settle',
    reference: input.reference,
    entries: [
      { accountId: hold.heldAccountId, amount: -hold.amount },
      { accountId: input.destinationAccountId, amount: hold.amount },
    ],
  });
}

/** Whether `reference`'s hold is placed and has not ended: a disbursement retried keeps its hold (docs/ledger.md, "Holds"). */
export async function holdIsHeld(executor: Executor, environment: Environment, reference: TransferReference): Promise<boolean> {
  const transfers = await repo.findTransfersOfReference(executor, {
    environment,
    kinds: ['hold', 'hold_release', 'hold_settle'],
    referenceType: reference.type,
    referenceId: reference.id,
  });
  return transfers.some((t) => t.kind === 'hold') && !transfers.some((t) => t.kind !== 'hold');
}
