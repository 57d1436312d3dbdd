import { beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { importBmfFile } from '../../src/directory/import-service.js';
import { rejectDisbursement, verifyDisbursement } from '../../src/grantmaking/disbursement-verification-service.js';
import { DomainError } from '../../src/errors/domain-error.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { bmfLine, writeBmfFile } from '../helpers/bmf.js';
import { apiRequest, type ApiResponse } from '../helpers/gateway.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Recipient verification and auto_fund over HTTP (docs/grantmaking.md, "Verification" and
 * "auto_fund"): a recipient the IRS data does not show as an eligible, deductible charity waits
 * for an operator; an auto-fund disbursement the balance does not cover opens one inbound
 * transfer, whose completion submits it and whose failure or cancel rejects it.
 */

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
let key: string;
let accountId: string;
const recipients = { eligible: '', notDeductible: '', conditional: '' };

beforeAll(async () => {
  await importBmfFile(
    t.db,
    writeBmfFile([
      bmfLine({ EIN: '840000501', NAME: 'PRAIRIE FOOD BANK' }),
      bmfLine({ EIN: '840000502', NAME: 'PRAIRIE SOCIAL WELFARE LEAGUE', SUBSECTION: '04', DEDUCTIBILITY: '2' }),
      bmfLine({ EIN: '840000503', NAME: 'PRAIRIE TRUST', STATUS: '12' }),
    ]),
  );
  const idOf = async (ein: string) =>
    (await t.db.selectFrom('directory_organizations').select('id').where('ein', '=', ein).executeTakeFirstOrThrow()).id;
  recipients.eligible = await idOf('840000501');
  recipients.notDeductible = await idOf('840000502');
  recipients.conditional = await idOf('840000503');
  await useGrantmaker('77-1000001');
});

function call(method: string, path: string, json?: unknown): Promise<ApiResponse> {
  return apiRequest(server, 'sandbox', method, path, { bearer: key, json });
}

/** A grantmaker of its own (an empty account) for the tests that count its money. */
async function useGrantmaker(ein: string) {
  await addOrganization(t.db, { ein, name: `Foundation ${ein}`, kind: 'grantmaker' });
  key = (await createApiKey(t.db, { org: ein, environment: 'sandbox' })).key;
  accountId = ((await call('GET', '/v1/financial_accounts')).body.results as { id: string }[])[0]!.id;
}

async function fund(amount: number) {
  const res = await call('POST', '/v1/inbound_transfers', { amount, account_id: accountId });
  expect((await call('POST', `/v1/simulations/inbound_transfers/${res.body.id as string}/complete`)).status).toBe(202);
}

async function create(recipient: string, amount: number, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await call('POST', '/v1/disbursements', {
    organization_id: recipient,
    amount,
    transactions: [{ amount, type: 'donor_advised_fund_grant' }],
    ...extra,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

async function approve(id: string) {
  const res = await call('POST', `/v1/disbursements/${id}/approve`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function get(id: string) {
  return (await call('GET', `/v1/disbursements/${id}`)).body;
}

async function balance() {
  return (await call('GET', `/v1/financial_accounts/${accountId}/balance`)).body as { current_balance: number; available_balance: number };
}

function holdsOf(id: string) {
  return t.db
    .selectFrom('ledger_transfers')
    .select('kind')
    .where('reference_type', '=', 'disbursement')
    .where('reference_id', '=', id)
    .orderBy('kind')
    .execute()
    .then((rows) => rows.map((r) => r.kind));
}

function eventsOf(id: string) {
  return t.db
    .selectFrom('events')
    .select('category')
    .where('associated_object_id', '=', id)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
    .then((rows) => rows.map((r) => r.category));
}

function transfersFor(disbursementId: string) {
  return t.db.selectFrom('inbound_transfers').selectAll().where('disbursement_id', '=', disbursementId).execute();
}

async function code(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (error) {
    if (error instanceof DomainError) return error.code;
    throw error;
  }
  return 'done';
}

function expectProblem(res: ApiResponse, status: number, problemCode: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ status, code: problemCode });
}

describe('recipient verification', () => {
  it('an eligible recipient is verified at approval: verification.verified_at is the approval time', async () => {
    await fund(10_000);
    const body = await approve(await create(recipients.eligible, 100));
    expect(body.status).toBe('submitted');
    const { approved_at } = body.approval as { approved_at: string };
    expect(body.verification).toEqual({ verified_at: approved_at });
    expect(body.bypass_chariot_organization_verification).toBe(false);
    expect(body.rejection).toBeUndefined();
  });

  it('a recipient without deductibility code 1 waits in awaiting_verification: no hold, not canceled (400), not simulated (412); verified, it is submitted', async () => {
    const before = await balance();
    const id = await create(recipients.notDeductible, 200);
    const approved = await approve(id);
    expect(approved.status).toBe('awaiting_verification');
    expect(approved.verification).toBeUndefined();
    expect(await holdsOf(id)).toEqual([]);
    expect(await balance()).toMatchObject({ available_balance: before.available_balance });
    expectProblem(await call('POST', `/v1/disbursements/${id}/cancel`), 400, 'invalid');
    expectProblem(await call('POST', `/v1/disbursements/${id}/approve`), 400, 'invalid');
    expectProblem(await call('POST', `/v1/simulations/disbursements/${id}/complete`), 412, 'precondition');

    expect((await verifyDisbursement(t.db, id)).status).toBe('submitted');
    const after = await get(id);
    expect(after.status).toBe('submitted');
    expect((after.verification as { verified_at: string }).verified_at).toEqual(expect.any(String));
    expect(await holdsOf(id)).toEqual(['hold']);
    expect(await balance()).toMatchObject({ available_balance: before.available_balance - 200 });
    expect(await eventsOf(id)).toEqual(['disbursement.created', 'disbursement.updated', 'disbursement.updated']);
    expect(await code(verifyDisbursement(t.db, id))).toBe('precondition');
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
  });

  it('a recipient whose exempt status is not 01, verified beyond the balance: awaiting_balance, then submitted by a deposit', async () => {
    const { available_balance } = await balance();
    const id = await create(recipients.conditional, available_balance + 300);
    expect((await approve(id)).status).toBe('awaiting_verification');
    expect((await verifyDisbursement(t.db, id)).status).toBe('awaiting_balance');
    await fund(300);
    expect((await get(id)).status).toBe('submitted');
    expect((await balance()).available_balance).toBe(0);
    await fund(10_000);
  });

  it('rejected by the operator: rejected with its reason and time, nothing moves, and it is not verified, rejected or canceled again', async () => {
    const id = await create(recipients.notDeductible, 400);
    await approve(id);
    const row = await rejectDisbursement(t.db, { id, reason: 'suspected_fraud' });
    expect(row.status).toBe('rejected');
    const body = await get(id);
    expect(body.rejection).toEqual({ reason: 'suspected_fraud', rejected_at: expect.any(String) });
    expect(body.verification).toBeUndefined();
    expect(await holdsOf(id)).toEqual([]);
    expect(await code(verifyDisbursement(t.db, id))).toBe('precondition');
    expect(await code(rejectDisbursement(t.db, { id, reason: 'duplicate' }))).toBe('precondition');
    expectProblem(await call('POST', `/v1/disbursements/${id}/cancel`), 400, 'invalid');
    expect(await eventsOf(id)).toEqual(['disbursement.created', 'disbursement.updated', 'disbursement.updated']);
    expect(await code(rejectDisbursement(t.db, { id, reason: 'because' }))).toBe('invalid');
  });

  it('bypass_chariot_organization_verification: approved straight to the balance step, shown true, with no verification', async () => {
    const id = await create(recipients.notDeductible, 500, { bypass_chariot_organization_verification: true });
    const body = await approve(id);
    expect(body).toMatchObject({ status: 'submitted', bypass_chariot_organization_verification: true });
    expect(body.verification).toBeUndefined();
    expect(await holdsOf(id)).toEqual(['hold']);
  });

  it('bulk approval sends each to its own step: verified recipients submitted, the others awaiting_verification', async () => {
    const ids = [
      await create(recipients.eligible, 10),
      await create(recipients.notDeductible, 20),
      await create(recipients.conditional, 30),
    ];
    const res = await call('POST', '/v1/disbursements/approve', { disbursement_ids: ids });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((res.body.disbursements as { status: string }[]).map((d) => d.status)).toEqual([
      'submitted',
      'awaiting_verification',
      'awaiting_verification',
    ]);
  });
});

describe('auto_fund', () => {
  it('covered by the balance: submitted at approval, shown auto_fund true, no inbound transfer', async () => {
    const id = await create(recipients.eligible, 100, { auto_fund: true });
    const body = await approve(id);
    expect(body).toMatchObject({ status: 'submitted', auto_fund: true });
    expect(await transfersFor(id)).toEqual([]);
  });

  it('beyond the balance: one pending inbound transfer of its amount (inbound_transfer.created); its completion submits it before an older waiting one', async () => {
    await useGrantmaker('77-1000002');
    await fund(500);
    // An older disbursement waiting for the balance, that the transfer's 1,000 would cover were it the queue's.
    const older = await create(recipients.eligible, 1_500);
    expect((await approve(older)).status).toBe('awaiting_balance');
    const id = await create(recipients.eligible, 1_000, { auto_fund: true });
    expect((await approve(id)).status).toBe('awaiting_balance');
    const [transfer, ...more] = await transfersFor(id);
    expect(more).toEqual([]);
    expect(transfer).toMatchObject({ amount: '1000', status: 'pending', financial_account_id: accountId });
    expect(await eventsOf(transfer!.id)).toEqual(['inbound_transfer.created']);
    const listed = await call('GET', `/v1/inbound_transfers/${transfer!.id}`);
    expect(listed.body).toMatchObject({ id: transfer!.id, amount: 1_000, status: 'pending' });

    expect((await call('POST', `/v1/simulations/inbound_transfers/${transfer!.id}/complete`)).status).toBe(202);
    expect((await get(id)).status).toBe('submitted');
    expect((await get(older)).status).toBe('awaiting_balance');
    expect(await holdsOf(id)).toEqual(['hold']);
    expect(await balance()).toMatchObject({ available_balance: 500, current_balance: 1_500 });
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
  });

  it('bulk approval beyond the balance opens one transfer for each auto-fund disbursement, none for the others', async () => {
    const ids = [
      await create(recipients.eligible, 20_000, { auto_fund: true }),
      await create(recipients.eligible, 30_000),
      await create(recipients.eligible, 40_000, { auto_fund: true }),
    ];
    const res = await call('POST', '/v1/disbursements/approve', { disbursement_ids: ids });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((res.body.disbursements as { status: string }[]).map((d) => d.status)).toEqual([
      'awaiting_balance',
      'awaiting_balance',
      'awaiting_balance',
    ]);
    expect((await transfersFor(ids[0]!)).map((r) => r.amount)).toEqual(['20000']);
    expect(await transfersFor(ids[1]!)).toEqual([]);
    expect((await transfersFor(ids[2]!)).map((r) => r.amount)).toEqual(['40000']);
    for (const id of ids) await call('POST', `/v1/disbursements/${id}/cancel`);
  });

  it('its transfer failed or canceled: the disbursement is rejected for insufficient_funds, nothing held', async () => {
    const failed = await create(recipients.eligible, 50_000, { auto_fund: true });
    const canceled = await create(recipients.eligible, 60_000, { auto_fund: true });
    await approve(failed);
    await approve(canceled);
    const [f] = await transfersFor(failed);
    const [c] = await transfersFor(canceled);
    expect((await call('POST', `/v1/simulations/inbound_transfers/${f!.id}/fail`)).status).toBe(202);
    expect((await call('POST', `/v1/inbound_transfers/${c!.id}/cancel`)).status).toBe(200);
    for (const id of [failed, canceled]) {
      const body = await get(id);
      expect(body.status).toBe('rejected');
      expect(body.rejection).toEqual({ reason: 'insufficient_funds', rejected_at: expect.any(String) });
      expect(await holdsOf(id)).toEqual([]);
    }
  });

  it('canceling the disbursement cancels its pending transfer in the same transaction; the transfer then completes no more (412)', async () => {
    const id = await create(recipients.eligible, 70_000, { auto_fund: true });
    await approve(id);
    const [transfer] = await transfersFor(id);
    expect((await call('POST', `/v1/disbursements/${id}/cancel`)).body.status).toBe('canceled');
    expect((await transfersFor(id)).map((r) => r.status)).toEqual(['canceled']);
    expect(await eventsOf(transfer!.id)).toEqual(['inbound_transfer.created', 'inbound_transfer.updated']);
    expectProblem(await call('POST', `/v1/simulations/inbound_transfers/${transfer!.id}/complete`), 412, 'precondition');
    expect((await get(id)).status).toBe('canceled');
  });

  it('with a recipient to verify: no transfer while awaiting_verification; verification opens it', async () => {
    const id = await create(recipients.notDeductible, 80_000, { auto_fund: true });
    expect((await approve(id)).status).toBe('awaiting_verification');
    expect(await transfersFor(id)).toEqual([]);
    expect((await verifyDisbursement(t.db, id)).status).toBe('awaiting_balance');
    const [transfer] = await transfersFor(id);
    expect(transfer).toMatchObject({ amount: '80000', status: 'pending' });
    expect((await call('POST', `/v1/simulations/inbound_transfers/${transfer!.id}/complete`)).status).toBe(202);
    expect((await get(id)).status).toBe('submitted');
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
  });
});
