import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { importBmfFile } from '../../src/directory/import-service.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { bmfLine, writeBmfFile } from '../helpers/bmf.js';
import { apiRequest, type ApiResponse } from '../helpers/gateway.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * The database connection lost in the middle of a grantmaking transaction (docs/grantmaking.md,
 * "A lost connection"): a second connection holds the row lock of the grantmaker's event
 * subscription, so the request's transaction stops at its webhook delivery's insert, after the
 * disbursement, its transactions, the ledger's entries and the event are written; its backend is
 * then terminated (pg_terminate_backend). The answer is the documented outage, 503 with
 * Retry-After, and nothing of the transaction is left: no disbursement, transaction row, ledger
 * entry or event, and verifyLedger is clean. The same request succeeds afterwards.
 */

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
let key: string;
let accountId: string;
let recipientId: string;
const subscriptions = new Map<string, string>();

beforeAll(async () => {
  await importBmfFile(t.db, writeBmfFile([bmfLine({ EIN: '840000401', NAME: 'LAKESHORE CLINIC' })]));
  recipientId = (await t.db.selectFrom('directory_organizations').select('id').where('ein', '=', '840000401').executeTakeFirstOrThrow()).id;
  await addOrganization(t.db, { ein: '76-1000001', name: 'Lakeshore Foundation', kind: 'grantmaker' });
  key = (await createApiKey(t.db, { org: '76-1000001', environment: 'sandbox' })).key;
  accountId = ((await call('GET', '/v1/financial_accounts')).body.results as { id: string }[])[0]!.id;
  for (const category of ['disbursement.created', 'disbursement.updated', 'inbound_transfer.updated']) {
    const created = await call('POST', '/v1/event_subscriptions', { url: 'http://127.0.0.1:9/hooks', category });
    expect(created.status).toBe(201);
    subscriptions.set(category, created.body.id as string);
  }
});

function call(method: string, path: string, json?: unknown) {
  return apiRequest(server, 'sandbox', method, path, { bearer: key, json });
}

async function ok(method: string, path: string, status: number, json?: unknown) {
  const res = await call(method, path, json);
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  return res.body;
}

const body = (amount: number) => ({ organization_id: recipientId, amount, transactions: [{ amount, type: 'donor_advised_fund_grant' }] });

/**
 * Sends `request` while the subscription of `category` is locked by another connection, and
 * terminates the request's backend once it waits for that lock: between two statements of its
 * transaction, the delivery's insert being the one it stopped at. Only that insert is cut: the
 * webhook dispatcher, recording an earlier delivery's failure on the same subscription, can wait
 * for the lock too, and cutting it instead would leave the request waiting for the holder.
 */
async function cutMidTransaction(category: string, request: () => Promise<ApiResponse>): Promise<ApiResponse> {
  const holder = new pg.Client({ connectionString: t.url });
  // Looks at pg_stat_activity outside any transaction: within one, its first snapshot would stay.
  const watcher = new pg.Client({ connectionString: t.url });
  await Promise.all([holder.connect(), watcher.connect()]);
  try {
    await holder.query('begin');
    await holder.query('select id from event_subscriptions where id = $1 for update', [subscriptions.get(category)]);
    const holderPid = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    let settled = false;
    const answer = request().finally(() => (settled = true));
    let stoppedAt: string | undefined;
    while (!stoppedAt && !settled) {
      const { rows } = await watcher.query<{ query: string; terminated: boolean }>(
        `select query, pg_terminate_backend(pid) as terminated from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' and $1 = any(pg_blocking_pids(pid))
            and query like 'insert into "webhook\\_deliveries"%'`,
        [holderPid],
      );
      stoppedAt = rows[0]?.query;
    }
    const res = await answer;
    expect(stoppedAt, 'the request ended before it reached its delivery insert').toBeDefined();
    return res;
  } finally {
    await holder.query('rollback');
    await Promise.all([holder.end(), watcher.end()]);
  }
}

/** What a cut transaction must not leave behind. */
async function counts() {
  const n = async (table: 'disbursements' | 'disbursement_transactions' | 'events' | 'ledger_entries' | 'ledger_transfers') =>
    Number(
      (
        await t.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    disbursements: await n('disbursements'),
    transactions: await n('disbursement_transactions'),
    events: await n('events'),
    entries: await n('ledger_entries'),
    transfers: await n('ledger_transfers'),
  };
}

function expectOutage(res: ApiResponse) {
  expect(res.status).toBe(503);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.headers.get('retry-after')).toBe('5');
  expect(res.body).toMatchObject({ status: 503, code: 'unavailable' });
}

async function balance() {
  return (await ok('GET', `/v1/financial_accounts/${accountId}/balance`, 200)) as { current_balance: number; available_balance: number };
}

describe('a connection lost mid-transaction', () => {
  it('during POST /v1/disbursements leaves no disbursement, transaction row, ledger entry or event (503); the retry creates it', async () => {
    const before = await counts();
    const res = await cutMidTransaction('disbursement.created', () => call('POST', '/v1/disbursements', body(1_500)));
    expectOutage(res);
    expect(await counts()).toEqual(before);
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
    const created = await ok('POST', '/v1/disbursements', 201, body(1_500));
    expect(created.status).toBe('pending_approval');
    expect(await counts()).toMatchObject({ disbursements: before.disbursements + 1, events: before.events + 1 });
  });

  it('during an approval leaves it pending_approval with no hold, no ledger entry and no event (503); the retry submits it', async () => {
    const transfer = (await ok('POST', '/v1/inbound_transfers', 201, { amount: 10_000, account_id: accountId })).id as string;
    await ok('POST', `/v1/simulations/inbound_transfers/${transfer}/complete`, 202);
    const id = (await ok('POST', '/v1/disbursements', 201, body(4_000))).id as string;
    const before = await counts();
    const funds = await balance();

    const res = await cutMidTransaction('disbursement.updated', () => call('POST', `/v1/disbursements/${id}/approve`));
    expectOutage(res);
    expect(await counts()).toEqual(before);
    expect((await ok('GET', `/v1/disbursements/${id}`, 200)).status).toBe('pending_approval');
    expect(await balance()).toMatchObject({ available_balance: funds.available_balance, current_balance: funds.current_balance });
    expect(await t.db.selectFrom('ledger_transfers').select('id').where('reference_id', '=', id).execute()).toEqual([]);
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });

    expect((await ok('POST', `/v1/disbursements/${id}/approve`, 200)).status).toBe('submitted');
    expect((await balance()).available_balance).toBe(funds.available_balance - 4_000);
  });

  it('during an inbound transfer completion leaves it pending, no deposit, and the disbursement it would fund still waiting (503)', async () => {
    const available = (await balance()).available_balance;
    const waiting = (await ok('POST', '/v1/disbursements', 201, body(available + 2_000))).id as string;
    expect((await ok('POST', `/v1/disbursements/${waiting}/approve`, 200)).status).toBe('awaiting_balance');
    const transfer = (await ok('POST', '/v1/inbound_transfers', 201, { amount: 2_000, account_id: accountId })).id as string;
    const before = await counts();

    // The deposit, the waiting disbursement's hold and its event are written before the transfer's own event.
    const res = await cutMidTransaction('inbound_transfer.updated', () =>
      call('POST', `/v1/simulations/inbound_transfers/${transfer}/complete`),
    );
    expectOutage(res);
    expect(await counts()).toEqual(before);
    expect((await ok('GET', `/v1/inbound_transfers/${transfer}`, 200)).status).toBe('pending');
    expect((await ok('GET', `/v1/disbursements/${waiting}`, 200)).status).toBe('awaiting_balance');
    expect((await balance()).available_balance).toBe(available);
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });

    await ok('POST', `/v1/simulations/inbound_transfers/${transfer}/complete`, 202);
    expect((await ok('GET', `/v1/disbursements/${waiting}`, 200)).status).toBe('submitted');
    expect((await balance()).available_balance).toBe(0);
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
  });
});
