import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import type { Db } from '../../src/db/database.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { summarise, type Measurement } from './load.js';

/**
 * The grantmaking scenarios' setup and load (docs/benchmarks.md, "Disbursements"): a grantmaker
 * with an API key and its disbursements account funded through the sandbox's inbound transfers,
 * as a grantmaker would fund it; recipients from the directory.
 */

/** Cents per disbursement in both scenarios. */
export const DISBURSEMENT_CENTS = 1_000;

export interface Grantmaker {
  ein: string;
  organizationId: string;
  key: string;
  accountId: string;
  programId: string;
}

/** One JSON call to the API with the grantmaker's key; throws on any status but `expect`. */
async function call(origin: string, key: string | undefined, method: string, path: string, expect: number, json?: unknown) {
  const res = await fetch(`${origin}${path}`, {
    method,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await res.text();
  if (res.status !== expect) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : {}) as Record<string, unknown>;
}

/** A grantmaker (provisioned with its accounts and program by addOrganization) and a sandbox API key. */
export async function addGrantmaker(db: Db, origin: string, ein: string): Promise<Grantmaker> {
  const org = await addOrganization(db, { ein, name: `Bench Foundation ${ein}`, kind: 'grantmaker' });
  const key = (await createApiKey(db, { org: ein, environment: 'sandbox' })).key;
  const accounts = (await call(origin, key, 'GET', '/v1/financial_accounts', 200)).results as { id: string; account_type: string }[];
  const account = accounts.find((a) => a.account_type === 'disbursements') ?? accounts[0]!;
  const programs = (await call(origin, key, 'GET', '/v1/programs', 200)).results as { id: string }[];
  return { ein, organizationId: org.id, key, accountId: account.id, programId: programs[0]!.id };
}

/** Funds the account as a grantmaker does in the sandbox: an inbound transfer, completed by its simulation. */
export async function fund(origin: string, g: Grantmaker, cents: number): Promise<void> {
  const transfer = await call(origin, g.key, 'POST', '/v1/inbound_transfers', 201, { amount: cents, account_id: g.accountId });
  await call(origin, g.key, 'POST', `/v1/simulations/inbound_transfers/${transfer.id as string}/complete`, 202);
}

function createBody(recipientId: string) {
  return {
    organization_id: recipientId,
    amount: DISBURSEMENT_CENTS,
    transactions: [{ amount: DISBURSEMENT_CENTS, type: 'donor_advised_fund_grant' }],
  };
}

/** The create + approve pair against Almoner (with the key) or the bare baseline (no key), as one timed unit. */
export function createAndApprove(origin: string, key: string | undefined, recipients: readonly string[]) {
  let n = 0;
  return async () => {
    n += 1;
    const created = await call(origin, key, 'POST', '/v1/disbursements', 201, createBody(recipients[n % recipients.length]!));
    const approved = await call(origin, key, 'POST', `/v1/disbursements/${created.id as string}/approve`, 200);
    if (approved.status !== 'submitted') throw new Error(`approved as ${String(approved.status)}, not submitted: the account ran dry`);
  };
}

export interface ContentionRound {
  statuses: Record<string, number>;
  available: number;
  ms: number[];
  errors: number;
  firstError?: string;
}

/**
 * One contention round: a fresh grantmaker whose balance covers `covered` disbursements, `total`
 * created, then all approved at once; each approval timed. The account's lock decides them one at
 * a time (docs/grantmaking.md, "Approving holds the money"): `covered` submitted, the rest wait.
 */
export async function contentionRound(
  db: Db,
  origin: string,
  ein: string,
  recipients: readonly string[],
  total: number,
  covered: number,
): Promise<ContentionRound> {
  const g = await addGrantmaker(db, origin, ein);
  await fund(origin, g, covered * DISBURSEMENT_CENTS);
  const ids: string[] = [];
  for (let i = 0; i < total; i += 1)
    ids.push((await call(origin, g.key, 'POST', '/v1/disbursements', 201, createBody(recipients[i % recipients.length]!))).id as string);
  const ms: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  await Promise.all(
    ids.map(async (id) => {
      const t0 = performance.now();
      try {
        await call(origin, g.key, 'POST', `/v1/disbursements/${id}/approve`, 200);
        ms.push(performance.now() - t0);
      } catch (error) {
        errors += 1;
        firstError ??= (error as Error).message;
      }
    }),
  );
  const rows = await db.selectFrom('disbursements').select('status').where('id', 'in', ids).execute();
  const statuses = rows.reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }), {});
  const balance = await call(origin, g.key, 'GET', `/v1/financial_accounts/${g.accountId}/balance`, 200);
  return { statuses, available: balance.available_balance as number, ms, errors, ...(firstError ? { firstError } : {}) };
}

/** The approvals of every round as one measurement: p50 and p99 over all of them, approvals/s over the rounds' wall time. */
export function contentionMeasurement(rounds: readonly ContentionRound[], seconds: number, concurrency: number): Measurement {
  const errors = rounds.reduce((sum, r) => sum + r.errors, 0);
  const firstError = rounds.find((r) => r.firstError)?.firstError;
  return summarise(
    rounds.flatMap((r) => r.ms),
    seconds,
    errors,
    concurrency,
    firstError ? { firstError } : {},
  );
}

/** `admin ledger verify`'s check (verifyLedger): every transfer sums to zero, every balance is its entries' sum. */
export async function ledgerClean(db: Db): Promise<{ ok: boolean; text: string }> {
  const result = await verifyLedger(db);
  return { ok: result.ok, text: JSON.stringify(result).slice(0, 400) };
}
