import { recordAudit } from '../audit/audit-log.js';
import type { Db } from '../db/database.js';
import { inTransaction, type Trx } from '../db/executor.js';
import { prefixedId } from '../db/ids.js';
import type { Cursor } from '../db/keyset.js';
import type { Environment } from '../db/schema.js';
import type { InboundTransferStatus } from '../db/schema-grantmaking.js';
import { DomainError, invalid, notFound, precondition } from '../errors/domain-error.js';
import { AlreadyPosted } from '../ledger/errors.js';
import { centsOf, postTransfer } from '../ledger/ledger.js';
import { emitEvent } from '../webhooks/outbox.js';
import { findFinancialAccount, type Scope } from './accounts-repository.js';
import { lockAccountForDeposit, rejectUnfunded, submitAutoFunded, submitAwaitingBalance } from './disbursement-funding-service.js';
import {
  findFinancialAccountPair,
  findInboundTransfer,
  insertInboundTransfer,
  listInboundTransfers,
  updateInboundTransferStatus,
} from './inbound-transfers-repository.js';
import { checkEvidence } from './evidence.js';
import { externalLedgerAccount } from './platform-accounts.js';

export type InboundTransferRow = Awaited<ReturnType<typeof listInboundTransfers>>[number];

/**
 * The largest inbound transfer, in cents ($100,000,000): far above any grantmaker's single
 * funding, and far below JavaScript's safe integers, so the ledger's sums stay exact
 * (docs/grantmaking.md, "Inbound transfers").
 */
export const MAX_INBOUND_TRANSFER_CENTS = 10_000_000_000;

/** The ledger transfer a completion posts: its kind, and the reference that makes it happen once. */
const DEPOSIT_KIND = 'deposit';
const REFERENCE_TYPE = 'inbound_transfer';

/** Who settles a transfer: the API's sandbox simulations (the grantmaker's scope), or an operator by id (production). */
type Settler = { scope: Scope } | { operator: { environment: Environment; reference: string } };

function updatedEvent(row: InboundTransferRow) {
  return {
    environment: row.environment,
    organizationId: row.organization_id,
    category: 'inbound_transfer.updated',
    objectId: row.id,
    objectType: 'inbound_transfer',
  } as const;
}

export async function createInboundTransfer(
  db: Db,
  scope: Scope,
  input: { amount: number; accountId: string; description?: string },
): Promise<InboundTransferRow> {
  if (!Number.isSafeInteger(input.amount) || input.amount <= 0) throw invalid('amount must be a positive whole number of cents');
  if (input.amount > MAX_INBOUND_TRANSFER_CENTS) throw invalid(`amount must be at most ${MAX_INBOUND_TRANSFER_CENTS} cents`);
  return inTransaction(db, async (trx) => {
    // The published operation has no 404: an account that is not the caller's is a bad account_id.
    const account = await findFinancialAccount(trx, scope, input.accountId);
    if (!account) throw invalid(`account_id: no financial account ${input.accountId} of yours in ${scope.environment}`);
    const row = await insertInboundTransfer(trx, {
      id: prefixedId('inbound_transfer'),
      environment: scope.environment,
      organization_id: scope.organizationId,
      financial_account_id: account.id,
      amount: input.amount,
      description: input.description ?? null,
    });
    await emitEvent(trx, { ...updatedEvent(row), category: 'inbound_transfer.created' });
    return row;
  });
}

export function inboundTransfersPage(db: Db, scope: Scope, cursor: Cursor | undefined, limit: number): Promise<InboundTransferRow[]> {
  return listInboundTransfers(db, scope, cursor, limit);
}

export function inboundTransferOf(db: Db, scope: Scope, id: string): Promise<InboundTransferRow | undefined> {
  return findInboundTransfer(db, scope, id);
}

/**
 * Moves a pending transfer to `status` under its row lock, with `effect` (the deposit, for a
 * completion) and the `inbound_transfer.updated` event in the same transaction. A transfer that
 * is no longer pending is refused (`precondition`, 412): the lock makes concurrent callers see
 * the first one's status, so only one of them changes it.
 */
async function settle(
  db: Db,
  settler: Settler,
  id: string,
  status: Exclude<InboundTransferStatus, 'pending'>,
  effect?: (trx: Trx, row: InboundTransferRow) => Promise<void>,
): Promise<InboundTransferRow> {
  const where = 'scope' in settler ? settler.scope : { environment: settler.operator.environment };
  return inTransaction(db, async (trx) => {
    const row = await findInboundTransfer(trx, where, id, true);
    if (!row) throw notFound('The inbound transfer was not found.');
    if (row.status !== 'pending') throw precondition(`The inbound transfer is ${row.status}; only a pending one can be ${status}.`);
    await effect?.(trx, row);
    const updated = await updateInboundTransferStatus(trx, id, {
      status,
      ...('operator' in settler ? { settlement_reference: settler.operator.reference } : {}),
    });
    await emitEvent(trx, updatedEvent(updated));
    if ('operator' in settler && (status === 'completed' || status === 'failed')) {
      await recordAudit(trx, {
        event: `inbound_transfer.${status}`,
        environment: row.environment,
        organizationId: row.organization_id,
        details: { inbound_transfer_id: row.id, amount: centsOf(row.amount), reference: settler.operator.reference, via: 'admin_cli' },
      });
    }
    return updated;
  });
}

/**
 * The money arrived: one ledger transfer, external → the financial account's available part,
 * whose reference (this transfer's id) the ledger posts at most once (docs/ledger.md, "Exactly once");
 * then the account's disbursements awaiting balance that it now covers are submitted.
 */
export function completeInboundTransfer(db: Db, settler: Settler, id: string): Promise<InboundTransferRow> {
  return settle(db, settler, id, 'completed', async (trx, row) => {
    const account = await findFinancialAccountPair(trx, row.environment, row.financial_account_id);
    if (!account) throw new Error(`inbound transfer ${row.id}: financial account ${row.financial_account_id} is missing`);
    // The account's lock before its ledger rows, in the order approvals take them (no deadlock).
    await lockAccountForDeposit(trx, row.environment, row.financial_account_id);
    const external = await externalLedgerAccount(trx, row.environment);
    const amount = centsOf(row.amount);
    try {
      await postTransfer(trx, {
        environment: row.environment,
        kind: DEPOSIT_KIND,
        reference: { type: REFERENCE_TYPE, id: row.id },
        entries: [
          { accountId: external, amount: -amount },
          { accountId: account.available_ledger_account_id, amount },
        ],
      });
    } catch (error) {
      // Only a write around this service could have posted it; the transfer stays as it is.
      if (error instanceof AlreadyPosted) throw precondition(`The inbound transfer's deposit is already posted.`);
      throw error;
    }
    // An auto-fund transfer's money is its disbursement's, before the queue (docs/grantmaking.md, "auto_fund").
    if (row.disbursement_id !== null) await submitAutoFunded(trx, row.environment, row.disbursement_id);
    // The money arrived: what waits for it is submitted in the same transaction (docs/grantmaking.md, "Disbursements").
    await submitAwaitingBalance(trx, row.environment, row.financial_account_id);
  });
}

/** An auto-fund transfer that will not bring its money rejects its waiting disbursement (docs/grantmaking.md, "auto_fund"). */
async function rejectItsDisbursement(trx: Trx, row: InboundTransferRow): Promise<void> {
  if (row.disbursement_id !== null) await rejectUnfunded(trx, row.environment, row.disbursement_id);
}

/** The money did not arrive: no ledger transfer. */
export function failInboundTransfer(db: Db, settler: Settler, id: string): Promise<InboundTransferRow> {
  return settle(db, settler, id, 'failed', rejectItsDisbursement);
}

/** The grantmaker called it off before it arrived: no ledger transfer. */
export function cancelInboundTransfer(db: Db, scope: Scope, id: string): Promise<InboundTransferRow> {
  return settle(db, { scope }, id, 'canceled', rejectItsDisbursement);
}

/**
 * The production rail (docs/grantmaking.md, "The production rail"): an operator holding the
 * bank's evidence completes or fails a production transfer, through the same calls as the
 * sandbox's simulations, audited with the evidence.
 */
export async function settleAsOperator(
  db: Db,
  action: 'complete' | 'fail',
  input: { id: string; reference: string },
): Promise<InboundTransferRow> {
  const settler: Settler = { operator: { environment: 'production', reference: checkEvidence(input.reference) } };
  try {
    return await (action === 'complete' ? completeInboundTransfer : failInboundTransfer)(db, settler, input.id);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'not_found')
      throw notFound(`no production inbound transfer ${input.id} (a sandbox transfer is settled by its simulations)`);
    throw error;
  }
}
