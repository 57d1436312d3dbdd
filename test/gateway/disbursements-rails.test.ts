import { beforeAll, describe, expect, it } from 'vitest';
import { addOrganization, addUser } from '../../src/accounts/service.js';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { importBmfFile } from '../../src/directory/import-service.js';
import { approveDisbursement, cancelDisbursement, createDisbursement } from '../../src/grantmaking/disbursements-service.js';
import { stopDisbursement } from '../../src/grantmaking/disbursement-retries-service.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { bmfLine, writeBmfFile } from '../helpers/bmf.js';
import { apiRequest, type ApiResponse } from '../helpers/gateway.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Disbursements on their rails (docs/grantmaking.md, "Rails and transfers", "Returned checks",
 * "Stopping a check"): the transfer each submission opens, each rail's completion and failure, a
 * returned check's retry, stopping a check, and includes=organization. Every answer is checked
 * against the published document by apiRequest.
 */

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const EIN = '74-1000001';
const OTHER_EIN = '74-1000002';
let key: string;
let otherKey: string;
let productionKey: string;
let accountId: string;
let otherAccountId: string;
/** Recipients by what their payments take: each directory organization's rail is fixed once. */
const org: Record<'check' | 'noAddress' | 'ach' | 'account' | 'retry' | 'suggested' | 'queue', string> = {
  check: '',
  noAddress: '',
  ach: '',
  account: '',
  retry: '',
  suggested: '',
  queue: '',
};
const EINS = {
  check: '840000501',
  noAddress: '840000502',
  ach: '840000503',
  account: '840000504',
  retry: '840000505',
  suggested: '840000506',
  queue: '840000507',
} as const;

beforeAll(async () => {
  await importBmfFile(
    t.db,
    writeBmfFile([
      bmfLine({ EIN: EINS.check, NAME: 'CEDAR LIBRARY', STREET: '1 ELM ST', CITY: 'DENVER', STATE: 'CO', ZIP: '80202' }),
      bmfLine({ EIN: EINS.noAddress, NAME: 'DRIFTING CHOIR', STREET: '' }),
      bmfLine({ EIN: EINS.ach, NAME: 'ASPEN SHELTER' }),
      bmfLine({ EIN: EINS.account, NAME: 'BIRCH CLINIC' }),
      bmfLine({ EIN: EINS.retry, NAME: 'WILLOW SCHOOL' }),
      bmfLine({ EIN: EINS.suggested, NAME: 'MAPLE TRUST' }),
      bmfLine({ EIN: EINS.queue, NAME: 'SPRUCE HOUSE' }),
    ]),
  );
  const rows = await t.db.selectFrom('directory_organizations').select(['id', 'ein']).execute();
  for (const name of Object.keys(EINS) as (keyof typeof EINS)[]) org[name] = rows.find((r) => r.ein === EINS[name])!.id;
  await addOrganization(t.db, { ein: EIN, name: 'Pine Foundation', kind: 'grantmaker' });
  await addOrganization(t.db, { ein: OTHER_EIN, name: 'Oak Foundation', kind: 'grantmaker' });
  key = (await createApiKey(t.db, { org: EIN, environment: 'sandbox' })).key;
  otherKey = (await createApiKey(t.db, { org: OTHER_EIN, environment: 'sandbox' })).key;
  productionKey = (await createApiKey(t.db, { org: EIN, environment: 'production' })).key;
  accountId = ((await call('GET', '/v1/financial_accounts')).body.results as { id: string }[])[0]!.id;
  otherAccountId = ((await call('GET', '/v1/financial_accounts', undefined, otherKey)).body.results as { id: string }[])[0]!.id;
  await fund(key, accountId, 1_000_000);
  expect((await onboard(org.ach, 'SANDBOX_SETTLEMENT_ACH')).status).toBe(200);
  expect((await onboard(org.account, 'SANDBOX_SETTLEMENT_ACCOUNT_TRANSFER')).status).toBe(200);
});

function call(method: string, path: string, json?: unknown, bearer = key, environment: 'sandbox' | 'production' = 'sandbox') {
  return apiRequest(server, environment, method, path, { bearer, json });
}

const onboard = (id: string, settlement: string, bearer = key) =>
  call('POST', `/v1/simulations/organizations/onboard/${id}`, { settlement }, bearer);

async function fund(bearer: string, account: string, amount: number) {
  const res = await call('POST', '/v1/inbound_transfers', { amount, account_id: account }, bearer);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect((await call('POST', `/v1/simulations/inbound_transfers/${res.body.id as string}/complete`, undefined, bearer)).status).toBe(202);
}

/** A disbursement created and approved; its answer. */
async function approved(recipient: string, amount: number, bearer = key, extra: Record<string, unknown> = {}) {
  const created = await call(
    'POST',
    '/v1/disbursements',
    { organization_id: recipient, amount, transactions: [{ amount, type: 'donor_advised_fund_grant' }], ...extra },
    bearer,
  );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const res = await call('POST', `/v1/disbursements/${created.body.id as string}/approve`, undefined, bearer);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as Disbursement;
}

interface Transfer {
  check_transfer?: Record<string, unknown>;
  ach_transfer?: Record<string, unknown>;
  account_transfer?: Record<string, unknown>;
}
type Disbursement = Record<string, unknown> & { id: string; status: string; transfers: Transfer[] };

async function get(id: string, bearer = key) {
  const res = await call('GET', `/v1/disbursements/${id}`, undefined, bearer);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as Disbursement;
}

async function available(bearer = key, account = accountId) {
  return ((await call('GET', `/v1/financial_accounts/${account}/balance`, undefined, bearer)).body as { available_balance: number })
    .available_balance;
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
    .execute()
    .then((rows) => rows.map((r) => r.category));
}

function expectProblem(res: ApiResponse, status: number, code: string, detail?: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ status, code });
  if (detail !== undefined) expect(String(res.body.detail)).toContain(detail);
}

describe('transfers', () => {
  it("a recipient with no Almoner account gets a check, issued, mailed to the directory's address, one transfer", async () => {
    const d = await approved(org.check, 1_200);
    expect(d.status).toBe('submitted');
    expect(d.transfers).toHaveLength(1);
    const check = d.transfers[0]!.check_transfer!;
    expect(Object.keys(d.transfers[0]!)).toEqual(['check_transfer']);
    expect(check).toMatchObject({
      amount: 1_200,
      status: 'issued',
      recipient_name: 'CEDAR LIBRARY',
      memo: 'Grant from Pine Foundation',
      mailing_address: { line1: '1 ELM ST', city: 'DENVER', state: 'CO', postal_code: '80202', country: 'US' },
    });
    expect(check.transfer_id).toMatch(/^check_transfer_[0-9a-z]{26}$/);
    expect(check.check_number).toMatch(/^\d+$/);
    expect(await get(d.id)).toEqual(d);
  });

  it('an onboarded recipient is paid electronically: an ACH credit (submitted) or an account transfer (pending_approval)', async () => {
    const ach = await approved(org.ach, 300);
    expect(ach.status).toBe('submitted');
    expect(ach.transfers).toEqual([
      {
        ach_transfer: expect.objectContaining({ amount: 300, status: 'submitted', direction: 'credit' }) as unknown,
      },
    ]);
    expect(ach.transfers[0]!.ach_transfer!.transfer_id).toMatch(/^ach_transfer_[0-9a-z]{26}$/);
    const account = await approved(org.account, 400);
    expect(account.transfers).toEqual([
      { account_transfer: expect.objectContaining({ amount: 400, status: 'pending_approval' }) as unknown },
    ]);
    expect(account.transfers[0]!.account_transfer!.transfer_id).toMatch(/^account_transfer_[0-9a-z]{26}$/);
  });

  it("the sending grantmaker's latest address suggestion is where its check goes; another grantmaker's suggestion is not", async () => {
    const upload = (bearer: string, line1: string) =>
      call(
        'POST',
        '/v1/nonprofit_addresses',
        { entries: [{ ein: EINS.suggested, line1, city: 'Austin', state: 'TX', zip: '78701' }] },
        bearer,
      );
    expect((await upload(key, '5 First St')).status).toBe(200);
    expect((await upload(key, '7 Second St')).status).toBe(200);
    expect((await upload(otherKey, '666 Elsewhere Ave')).status).toBe(200);
    const d = await approved(org.suggested, 100);
    expect(d.transfers[0]!.check_transfer!.mailing_address).toEqual({
      line1: '7 Second St',
      city: 'Austin',
      state: 'TX',
      postal_code: '78701',
      country: 'US',
    });
  });

  it('a bulk approval opens each one its transfer, on its own rail', async () => {
    const ids: string[] = [];
    for (const recipient of [org.check, org.ach]) {
      const created = await call('POST', '/v1/disbursements', {
        organization_id: recipient,
        amount: 70,
        transactions: [{ amount: 70, type: 'donor_advised_fund_grant' }],
      });
      ids.push(created.body.id as string);
    }
    const res = await call('POST', '/v1/disbursements/approve', { disbursement_ids: ids });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const results = res.body.disbursements as Disbursement[];
    expect(results.map((d) => d.status)).toEqual(['submitted', 'submitted']);
    expect(results.map((d) => Object.keys(d.transfers[0]!))).toEqual([['check_transfer'], ['ach_transfer']]);
  });

  it('a check with no usable mailing address: validating_organization, the hold placed and kept, no transfer', async () => {
    const before = await available();
    const d = await approved(org.noAddress, 700);
    expect(d.status).toBe('validating_organization');
    expect(d.transfers).toEqual([]);
    expect(await available()).toBe(before - 700);
    expect(await holdsOf(d.id)).toEqual(['hold']);
    expect(await eventsOf(d.id)).toEqual(['disbursement.created', 'disbursement.updated']);
  });

  it("a memo is the disbursement's description cut to 72 characters", async () => {
    const [row] = await t.db.selectFrom('organizations').select('id').where('ein', '=', EIN.replace('-', '')).execute();
    const scope = { organizationId: row!.id, environment: 'sandbox' as const };
    const record = await createDisbursement(t.db, scope, 'api_key:test', {
      organizationId: org.check,
      amount: 50,
      description: 'x'.repeat(100),
      transactions: [{ amount: 50, type: 'donor_advised_fund_grant' }],
    });
    await approveDisbursement(t.db, scope, 'api_key:test', record.row.id);
    expect((await get(record.row.id)).transfers[0]!.check_transfer!.memo).toBe('x'.repeat(72));
  });
});

describe('simulations per rail', () => {
  it('complete: a check deposited, an ACH credit completed, an account transfer complete; the disbursement completed', async () => {
    for (const [recipient, rail, status, at] of [
      [org.check, 'check_transfer', 'deposited', 'deposited_at'],
      [org.ach, 'ach_transfer', 'completed', 'settled_at'],
      [org.account, 'account_transfer', 'complete', undefined],
    ] as const) {
      const d = await approved(recipient, 250);
      expect((await call('POST', `/v1/simulations/disbursements/${d.id}/complete`)).status).toBe(202);
      const after = await get(d.id);
      expect(after.status).toBe('completed');
      const transfer = (after.transfers[0] as Record<string, Record<string, unknown>>)[rail]!;
      expect(transfer.status).toBe(status);
      if (at) expect(transfer[at]).toEqual(expect.any(String));
      expect(await holdsOf(d.id)).toEqual(['hold', 'hold_settle']);
    }
  });

  it('fail of an ACH credit: returned, the disbursement failed, the hold released once', async () => {
    const before = await available();
    const d = await approved(org.ach, 900);
    expect((await call('POST', `/v1/simulations/disbursements/${d.id}/fail`)).status).toBe(202);
    const after = await get(d.id);
    expect(after.status).toBe('failed');
    expect(after.transfers[0]!.ach_transfer).toMatchObject({ status: 'returned', returned_at: expect.any(String) as unknown });
    expect(await available()).toBe(before);
    expect(await holdsOf(d.id)).toEqual(['hold', 'hold_release']);
  });

  it('fail of a check: returned, the disbursement validating_organization, the hold kept for the retry', async () => {
    const before = await available();
    const d = await approved(org.check, 800);
    expect((await call('POST', `/v1/simulations/disbursements/${d.id}/fail`)).status).toBe(202);
    const after = await get(d.id);
    expect(after.status).toBe('validating_organization');
    expect(after.transfers.map((x) => x.check_transfer?.status)).toEqual(['returned']);
    expect(await available()).toBe(before - 800);
    expect(await holdsOf(d.id)).toEqual(['hold']);
    expectProblem(await call('POST', `/v1/simulations/disbursements/${d.id}/fail`), 412, 'precondition');
    expectProblem(await call('POST', `/v1/simulations/disbursements/${d.id}/complete`), 412, 'precondition');
  });

  it('fail of an account transfer is 400 and changes nothing', async () => {
    const d = await approved(org.account, 150);
    expectProblem(await call('POST', `/v1/simulations/disbursements/${d.id}/fail`), 400, 'invalid', 'account transfer');
    expect(await get(d.id)).toEqual(d);
    expect(await holdsOf(d.id)).toEqual(['hold']);
  });
});

describe('a returned check retried', () => {
  it('onboarding the recipient resubmits its validating_organization disbursements on the electronic rail, every grantmaker’s, the holds kept', async () => {
    await fund(otherKey, otherAccountId, 5_000);
    const returned = await approved(org.retry, 600);
    expect((await call('POST', `/v1/simulations/disbursements/${returned.id}/fail`)).status).toBe(202);
    const others = await approved(org.retry, 2_000, otherKey);
    expect((await call('POST', `/v1/simulations/disbursements/${others.id}/fail`, undefined, otherKey)).status).toBe(202);
    const before = await available();
    const waiting = await approved(org.retry, 100);
    expect(waiting.status).toBe('submitted');
    expect((await onboard(org.retry, 'SANDBOX_SETTLEMENT_ACH')).status).toBe(200);

    const retried = await get(returned.id);
    expect(retried.status).toBe('submitted');
    expect(retried.transfers.map((x) => Object.keys(x)[0])).toEqual(['check_transfer', 'ach_transfer']);
    expect(retried.transfers[0]!.check_transfer!.status).toBe('returned');
    expect(retried.transfers[1]!.ach_transfer!.status).toBe('submitted');
    expect((await get(others.id, otherKey)).status).toBe('submitted');
    // An issued check is not a validating one: it stays on its rail.
    expect((await get(waiting.id)).transfers).toHaveLength(1);
    expect(await available()).toBe(before - 100);
    expect(await holdsOf(returned.id)).toEqual(['hold']);
    expect(await eventsOf(returned.id)).toEqual([
      'disbursement.created',
      'disbursement.updated',
      'disbursement.updated',
      'disbursement.updated',
    ]);
    expect((await call('POST', `/v1/simulations/disbursements/${returned.id}/complete`)).status).toBe(202);
    expect((await get(returned.id)).transfers[1]!.ach_transfer!.status).toBe('completed');
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
  });

  it('cancel of a validating_organization disbursement stays refused (400): its payment was submitted once', async () => {
    const d = await approved(org.noAddress, 10);
    expect(d.status).toBe('validating_organization');
    expectProblem(await call('POST', `/v1/disbursements/${d.id}/cancel`), 400, 'invalid');
  });
});

describe('POST /v1/disbursements/{id}/stop', () => {
  it('stops an issued check: 202, the check and the disbursement stopped, the hold released once, the stop shown, disbursement.updated', async () => {
    const before = await available();
    const d = await approved(org.check, 500);
    const res = await call('POST', `/v1/disbursements/${d.id}/stop`, { reason: 'mail_delivery_failure' });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const after = await get(d.id);
    expect(after.status).toBe('stopped');
    expect(after.stop).toEqual({ stopped_at: expect.any(String) as unknown });
    expect(after.transfers[0]!.check_transfer).toMatchObject({
      status: 'stopped',
      stopped_at: after.stop && (after.stop as { stopped_at: string }).stopped_at,
    });
    expect(await available()).toBe(before);
    expect(await holdsOf(d.id)).toEqual(['hold', 'hold_release']);
    expect(await eventsOf(d.id)).toEqual(['disbursement.created', 'disbursement.updated', 'disbursement.updated']);
    expectProblem(await call('POST', `/v1/disbursements/${d.id}/stop`, { reason: 'voided' }), 412, 'precondition', 'stopped');
    expect(await holdsOf(d.id)).toEqual(['hold', 'hold_release']);
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
  });

  it('412 naming why: an ACH credit, a disbursement not submitted, a check already deposited; nothing moves', async () => {
    const ach = await approved(org.ach, 20);
    expectProblem(await call('POST', `/v1/disbursements/${ach.id}/stop`, { reason: 'unknown' }), 412, 'precondition', 'check');
    const created = await call('POST', '/v1/disbursements', {
      organization_id: org.check,
      amount: 20,
      transactions: [{ amount: 20, type: 'donor_advised_fund_grant' }],
    });
    expectProblem(
      await call('POST', `/v1/disbursements/${created.body.id as string}/stop`, { reason: 'unknown' }),
      412,
      'precondition',
      'pending_approval',
    );
    const deposited = await approved(org.check, 20);
    expect((await call('POST', `/v1/simulations/disbursements/${deposited.id}/complete`)).status).toBe(202);
    expectProblem(await call('POST', `/v1/disbursements/${deposited.id}/stop`, { reason: 'unknown' }), 412, 'precondition', 'deposited');
    expect(await holdsOf(deposited.id)).toEqual(['hold', 'hold_settle']);
  });

  it("400 naming reason for a missing or unknown reason; another grantmaker's id is 404, and so is a sandbox id in production", async () => {
    const d = await approved(org.check, 30);
    expectProblem(await call('POST', `/v1/disbursements/${d.id}/stop`, {}), 400, 'invalid', 'reason');
    expectProblem(await call('POST', `/v1/disbursements/${d.id}/stop`, { reason: 'lost' }), 400, 'invalid', 'reason');
    expectProblem(await call('POST', `/v1/disbursements/${d.id}/stop`, { reason: 'voided' }, otherKey), 404, 'not_found');
    expectProblem(
      await call('POST', `/v1/disbursements/${d.id}/stop`, { reason: 'voided' }, productionKey, 'production'),
      404,
      'not_found',
    );
    expect((await get(d.id)).status).toBe('submitted');
  });

  it('stops and completions of one check racing: exactly one wins, the hold ends once', async () => {
    const d = await approved(org.check, 333);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        i % 2 === 0
          ? call('POST', `/v1/disbursements/${d.id}/stop`, { reason: 'voided' })
          : call('POST', `/v1/simulations/disbursements/${d.id}/complete`),
      ),
    );
    expect(answers.filter((r) => r.status === 202)).toHaveLength(1);
    expect(answers.filter((r) => r.status === 412)).toHaveLength(7);
    const kinds = await holdsOf(d.id);
    expect(kinds).toHaveLength(2);
    expect(kinds[0]).toBe('hold');
    const after = await get(d.id);
    expect(after.status).toBe(kinds[1] === 'hold_release' ? 'stopped' : 'completed');
    expect(after.transfers[0]!.check_transfer!.status).toBe(kinds[1] === 'hold_release' ? 'stopped' : 'deposited');
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });
  });

  it("the freed money submits the account's awaiting_balance disbursements, as after a failure", async () => {
    const [oak] = await t.db.selectFrom('organizations').select('id').where('ein', '=', OTHER_EIN.replace('-', '')).execute();
    const spare = await available(otherKey, otherAccountId);
    // Spend what Oak has beyond 1,000, then a 1,000 check, then a waiting 600.
    if (spare > 1_000) expect((await approved(org.check, spare - 1_000, otherKey)).status).toBe('submitted');
    const check = await approved(org.queue, 1_000, otherKey);
    const waiting = await approved(org.queue, 600, otherKey);
    expect(waiting.status).toBe('awaiting_balance');
    expect(await available(otherKey, otherAccountId)).toBe(0);
    await stopDisbursement(t.db, { organizationId: oak!.id, environment: 'sandbox' }, 'api_key:test', check.id, 'voided');
    const submitted = await get(waiting.id, otherKey);
    expect(submitted.status).toBe('submitted');
    expect(submitted.transfers).toHaveLength(1);
    expect(await available(otherKey, otherAccountId)).toBe(400);
  });
});

describe('includes=organization, approval, cancelation and stop as published', () => {
  it("embeds the recipient's Organization on get and list; an unknown value is 400 naming includes", async () => {
    const d = await approved(org.check, 40);
    const one = await call('GET', `/v1/disbursements/${d.id}?includes=organization`);
    expect(one.body.organization).toMatchObject({ id: org.check, ein: EINS.check, name: 'CEDAR LIBRARY', claimed: false });
    expect((await call('GET', `/v1/disbursements/${d.id}`)).body.organization).toBeUndefined();
    const list = await call('GET', `/v1/disbursements?organization_id=${org.ach}&includes=organization`);
    const results = list.body.results as { organization: { id: string } }[];
    expect(results.length).toBeGreaterThan(0);
    for (const r of results) expect(r.organization.id).toBe(org.ach);
    expectProblem(await call('GET', `/v1/disbursements/${d.id}?includes=program`), 400, 'invalid', 'includes');
    expectProblem(await call('GET', '/v1/disbursements?includes=organization,donors'), 400, 'invalid', 'includes');
  });

  it("a user's approval, cancelation and stop show the user's e-mail; an API key's leave it out", async () => {
    const [pine] = await t.db.selectFrom('organizations').select('id').where('ein', '=', EIN.replace('-', '')).execute();
    const scope = { organizationId: pine!.id, environment: 'sandbox' as const };
    const user = await addUser(t.db, { email: 'grants-officer@example.org', password: 'pw-grants-officer-1' }, MIN_PASSWORD_PARAMS);
    const record = await createDisbursement(t.db, scope, `user:${user.id}`, {
      organizationId: org.check,
      amount: 60,
      transactions: [{ amount: 60, type: 'donor_advised_fund_grant' }],
    });
    await approveDisbursement(t.db, scope, `user:${user.id}`, record.row.id);
    await stopDisbursement(t.db, scope, `user:${user.id}`, record.row.id, 'not_authorized');
    const stopped = await get(record.row.id);
    expect(stopped.approval).toEqual({ approved_by: 'grants-officer@example.org', approved_at: expect.any(String) as unknown });
    expect(stopped.stop).toEqual({ stopped_by: 'grants-officer@example.org', stopped_at: expect.any(String) as unknown });

    const created = await call('POST', '/v1/disbursements', {
      organization_id: org.check,
      amount: 5,
      transactions: [{ amount: 5, type: 'donor_advised_fund_grant' }],
    });
    const canceled = await call('POST', `/v1/disbursements/${created.body.id as string}/cancel`);
    expect(canceled.body.cancelation).toEqual({ canceled_at: expect.any(String) as unknown });
    expect(canceled.body.approval).toBeUndefined();
    const byUser = await createDisbursement(t.db, scope, `user:${user.id}`, {
      organizationId: org.check,
      amount: 5,
      transactions: [{ amount: 5, type: 'donor_advised_fund_grant' }],
    });
    await cancelDisbursement(t.db, scope, byUser.row.id, `user:${user.id}`);
    expect((await get(byUser.row.id)).cancelation).toEqual({
      canceled_by: 'grants-officer@example.org',
      canceled_at: expect.any(String) as unknown,
    });
  });
});
