import { DomainError, invalid, notFound } from '../errors/domain-error.js';
import { inTransaction, type Executor, type Trx } from '../db/executor.js';
import { ulid } from '../db/ids.js';
import type { Environment } from '../db/schema.js';
import { LEDGER_PURPOSES, type LedgerPurpose } from '../db/schema-ledger.js';
import { AlreadyPosted, InsufficientBalance } from './errors.js';
import * as repo from './ledger-repository.js';

/**
 * The ledger's service (docs/ledger.md): accounts, transfers of balanced entries, balances.
 * Every function takes the caller's executor: a transaction, so the posting commits or rolls
 * back with the state change that causes it; given the database itself, it opens its own.
 */

export const ENVIRONMENTS: readonly Environment[] = ['production', 'sandbox'];

/** The kinds of a hold's end: at most one of them per hold (migration's ledger_transfers_hold_end_key). */
export const HOLD_END_KINDS = ['hold_release', 'hold_settle'] as const;

const NAME = /^[a-z][a-z0-9_]{0,63}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_ENTRIES = 100;

export interface LedgerAccount {
  id: string;
  environment: Environment;
  organizationId: string | null;
  purpose: LedgerPurpose;
  mayGoNegative: boolean;
  /** Cents. */
  balance: number;
}

export interface TransferReference {
  type: string;
  id: string;
}

export interface TransferInput {
  environment: Environment;
  kind: string;
  reference: TransferReference;
  entries: readonly { accountId: string; amount: number }[];
}

export interface PostedTransfer {
  id: string;
  environment: Environment;
  kind: string;
  reference: TransferReference;
  /** By account id. */
  entries: { accountId: string; amount: number }[];
}

/** Runs `fn` in the executor's transaction, or in one of its own when given the database. */
function withinTransaction<T>(executor: Executor, fn: (trx: Trx) => Promise<T>): Promise<T> {
  return executor.isTransaction ? fn(executor as Trx) : inTransaction(executor, fn);
}

/** pg reads bigint as text; a balance beyond JavaScript's safe integers is refused rather than rounded. */
export function centsOf(text: string | number | bigint): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new Error(`ledger amount ${String(text)} is beyond JavaScript's safe integers`);
  return value;
}

function toAccount(row: Awaited<ReturnType<typeof repo.findLedgerAccounts>>[number]): LedgerAccount {
  return {
    id: row.id,
    environment: row.environment,
    organizationId: row.organization_id,
    purpose: row.purpose,
    mayGoNegative: row.may_go_negative,
    balance: centsOf(row.balance),
  };
}

export function checkEnvironment(environment: unknown): asserts environment is Environment {
  if (!ENVIRONMENTS.includes(environment as Environment)) throw invalid(`environment must be production or sandbox`);
}

/**
 * Opens an account. Customer money (available, held) belongs to an organization and never goes
 * below zero; the others are floored too unless `mayGoNegative` (external is, by default).
 */
export async function openLedgerAccount(
  executor: Executor,
  input: { environment: Environment; organizationId?: string | null; purpose: LedgerPurpose; mayGoNegative?: boolean },
): Promise<LedgerAccount> {
  checkEnvironment(input.environment);
  if (!LEDGER_PURPOSES.includes(input.purpose)) throw invalid(`ledger account purpose must be one of ${LEDGER_PURPOSES.join(', ')}`);
  const organizationId = input.organizationId ?? null;
  if (organizationId !== null && (typeof organizationId !== 'string' || !UUID.test(organizationId)))
    throw invalid('organization id must be a UUID');
  const customer = input.purpose === 'available' || input.purpose === 'held';
  if (customer && organizationId === null) throw invalid(`a ${input.purpose} ledger account belongs to an organization`);
  const mayGoNegative = input.mayGoNegative ?? input.purpose === 'external';
  if (customer && mayGoNegative) throw invalid(`a ${input.purpose} ledger account may not go below zero`);
  try {
    const row = await repo.insertLedgerAccount(executor, {
      id: `lacct_${ulid()}`,
      environment: input.environment,
      organization_id: organizationId,
      purpose: input.purpose,
      may_go_negative: mayGoNegative,
    });
    return toAccount(row);
  } catch (error) {
    if ((error as { code?: string }).code === '23503') throw notFound(`no organization ${organizationId}`);
    throw error;
  }
}

/** The accounts of `ids`, by id; an id with no account is refused. */
export async function ledgerAccounts(executor: Executor, ids: readonly string[]): Promise<Map<string, LedgerAccount>> {
  const rows = await repo.findLedgerAccounts(executor, ids);
  const found = new Map(rows.map((r) => [r.id, toAccount(r)]));
  const missing = ids.find((id) => !found.has(id));
  if (missing !== undefined) throw notFound(`no ledger account ${missing}`);
  return found;
}

/** Each account's balance in cents (the sum of its entries, as the trigger keeps it). */
export async function accountBalances(executor: Executor, accountIds: readonly string[]): Promise<Map<string, number>> {
  const accounts = await ledgerAccounts(executor, accountIds);
  return new Map([...accounts].map(([id, a]) => [id, a.balance]));
}

function checkReference(reference: TransferReference | undefined): TransferReference {
  if (!reference || typeof reference !== 'object') throw invalid('a ledger transfer needs a reference { type, id }');
  if (typeof reference.type !== 'string' || !NAME.test(reference.type))
    throw invalid('reference type must be lower-case letters, digits and _ (at most 64), starting with a letter');
  if (typeof reference.id !== 'string' || reference.id.length < 1 || reference.id.length > 200 || reference.id.includes('\u0000'))
    throw invalid('reference id must be 1 to 200 characters');
  return reference;
}

/** Everything a transfer must be that can be told without the database (docs/ledger.md, "Transfers"). */
function checkTransfer(input: TransferInput): void {
  checkEnvironment(input.environment);
  if (typeof input.kind !== 'string' || !NAME.test(input.kind))
    throw invalid('transfer kind must be lower-case letters, digits and _ (at most 64), starting with a letter');
  checkReference(input.reference);
  const entries = input.entries;
  if (!Array.isArray(entries) || entries.length < 2) throw invalid('a ledger transfer has at least two entries');
  if (entries.length > MAX_ENTRIES) throw invalid(`a ledger transfer has at most ${MAX_ENTRIES} entries`);
  const seen = new Set<string>();
  let sum = 0n;
  for (const [i, entry] of entries.entries()) {
    if (typeof entry?.accountId !== 'string' || entry.accountId === '') throw invalid(`entry ${i + 1} has no account`);
    if (seen.has(entry.accountId)) throw invalid(`ledger account ${entry.accountId} appears twice; net its amounts into one entry`);
    seen.add(entry.accountId);
    if (!Number.isSafeInteger(entry.amount)) throw invalid(`entry ${i + 1}'s amount must be a whole number of cents (a safe integer)`);
    if (entry.amount === 0) throw invalid(`entry ${i + 1}'s amount must not be zero`);
    sum += BigInt(entry.amount);
  }
  if (sum !== 0n) throw invalid(`the entries of a ledger transfer must sum to zero (they sum to ${sum})`);
}

function alreadyPosted(existing: { id: string; kind: string }, input: TransferInput): AlreadyPosted {
  const what = `${input.reference.type} ${input.reference.id}`;
  return existing.kind === input.kind
    ? new AlreadyPosted(existing.id, `ledger transfer ${input.kind} of ${what} already posted`)
    : new AlreadyPosted(existing.id, `the hold of ${what} already ended (${existing.kind})`);
}

/**
 * Posts one transfer: validated first, then written as its entries, which move the balances
 * (the trigger). Throws InsufficientBalance when a floored account would go below zero (the
 * transaction is then aborted: roll it back) and AlreadyPosted when this reference's transfer
 * of this kind exists (the transaction stays usable: a replay is done already).
 */
export async function postTransfer(executor: Executor, input: TransferInput): Promise<PostedTransfer> {
  checkTransfer(input);
  return withinTransaction(executor, async (trx) => {
    const ids = input.entries.map((e) => e.accountId);
    const accounts = await ledgerAccounts(trx, ids);
    for (const account of accounts.values()) {
      if (account.environment !== input.environment) throw notFound(`no ledger account ${account.id} in ${input.environment}`);
    }
    const id = `ltr_${ulid()}`;
    const inserted = await repo.insertTransferOnce(trx, {
      id,
      environment: input.environment,
      kind: input.kind,
      reference_type: input.reference.type,
      reference_id: input.reference.id,
    });
    if (!inserted) {
      const kinds = (HOLD_END_KINDS as readonly string[]).includes(input.kind) ? HOLD_END_KINDS : [input.kind];
      const [existing] = await repo.findTransfersOfReference(trx, {
        environment: input.environment,
        kinds,
        referenceType: input.reference.type,
        referenceId: input.reference.id,
      });
      if (!existing) throw new Error('ledger transfer insert conflicted with no transfer of its reference');
      throw alreadyPosted(existing, input);
    }
    // By account id: concurrent transfers lock shared accounts in one order (no deadlock).
    const entries = [...input.entries].sort((a, b) => (a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : 0));
    try {
      await repo.insertEntries(
        trx,
        entries.map((e) => ({
          id: `lent_${ulid()}`,
          transfer_id: id,
          account_id: e.accountId,
          environment: input.environment,
          amount: e.amount,
        })),
      );
    } catch (error) {
      throw mapPostingError(error, accounts);
    }
    return {
      id,
      environment: input.environment,
      kind: input.kind,
      reference: { type: input.reference.type, id: input.reference.id },
      entries: entries.map((e) => ({ accountId: e.accountId, amount: e.amount })),
    };
  });
}

/** The database's refusals of a posting as domain errors; anything else is rethrown. */
function mapPostingError(error: unknown, accounts: Map<string, LedgerAccount>): unknown {
  const { code, constraint, detail } = (error ?? {}) as { code?: string; constraint?: string; detail?: string };
  if (code === '23514' && constraint === 'ledger_accounts_floor' && detail) {
    return new InsufficientBalance(detail, accounts.get(detail)?.purpose ?? 'ledger');
  }
  if (code === '22003') return new DomainError('unprocessable', 'a ledger balance would overflow');
  return error;
}

/** A financial account: the pair of ledger accounts its balances derive from (docs/ledger.md, "Financial accounts"). */
export interface FinancialAccountPair {
  availableAccountId: string;
  heldAccountId: string;
}

/** Opens an organization's pair: available and held, both floored at zero. */
export async function openFinancialAccountPair(
  executor: Executor,
  input: { environment: Environment; organizationId: string },
): Promise<FinancialAccountPair> {
  return withinTransaction(executor, async (trx) => {
    const available = await openLedgerAccount(trx, { ...input, purpose: 'available' });
    const held = await openLedgerAccount(trx, { ...input, purpose: 'held' });
    return { availableAccountId: available.id, heldAccountId: held.id };
  });
}

/** The published FinancialAccountBalance: current = available + held (settled money), available = available. */
export async function financialAccountBalance(
  executor: Executor,
  pair: FinancialAccountPair,
): Promise<{ current_balance: number; available_balance: number }> {
  const balances = await accountBalances(executor, [pair.availableAccountId, pair.heldAccountId]);
  const available = balances.get(pair.availableAccountId)!;
  const held = balances.get(pair.heldAccountId)!;
  return { current_balance: available + held, available_balance: available };
}
