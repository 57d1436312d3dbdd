import { beforeAll, describe, expect, it } from 'vitest';
import { openDonorAccount } from '../../src/daf/donor-accounts-service.js';
import { apiRequest } from '../helpers/gateway.js';
import { authorizedSession, dafOfFundProvider, directoryOrganizations, givingCaller, simulatedDafId } from '../helpers/giving.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/** Capturing grants from authorized workflow sessions (docs/giving.md, "Capturing grants"). */

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
let platform: Awaited<ReturnType<typeof givingCaller>>;
let other: Awaited<ReturnType<typeof givingCaller>>;
let provider: Awaited<ReturnType<typeof givingCaller>>;
let orgs: Map<string, string>;
let connectId: string;
let memberConnectId: string;
let simulated: string;
let integrated: string;

async function connect(bearer: string, organizationId: string, env: 'sandbox' | 'production' = 'sandbox') {
  const res = await apiRequest(server, env, 'POST', '/v1/connects', {
    bearer,
    json: { organization_id: organizationId, contact: { email: 'c@example.org' } },
  });
  return String(res.body.id);
}

beforeAll(async () => {
  orgs = await directoryOrganizations(t.db, [
    { ein: '881000001', name: 'RIVER CLEANUP' },
    { ein: '881000002', name: 'CITY SHELTER' },
  ]);
  platform = await givingCaller(t.db, '88-2000001', 'Give Platform', 'platform');
  other = await givingCaller(t.db, '88-2000002', 'Other Platform', 'platform');
  provider = await givingCaller(t.db, '88-3000001', 'Example Charitable', 'fund_provider');
  // CITY SHELTER is on Almoner: its grants are paid directly.
  await givingCaller(t.db, '88-1000002', 'City Shelter', 'nonprofit');
  connectId = await connect(platform.sandbox, orgs.get('881000001')!);
  memberConnectId = await connect(platform.sandbox, orgs.get('881000002')!);
  simulated = await simulatedDafId(t.db);
  integrated = await dafOfFundProvider(t.db, provider.id);
});

function capture(json: Record<string, unknown>, bearer = platform.sandbox, headers: Record<string, string> = {}) {
  return apiRequest(server, 'sandbox', 'POST', '/v1/grants', { bearer, json, headers });
}

async function countRows(table: 'grants' | 'grant_requests', column: 'workflow_session_id' | 'donor_account_id', value: string) {
  const rows = await t.db.selectFrom(table).select('id').where(column, '=', value).execute();
  return rows.length;
}

describe('POST /v1/grants at the simulated DAF', () => {
  it('captures once: 201 with Location and the published shape, then 200 with the same grant whatever the body', async () => {
    const session = await authorizedSession(t.db, { connectId, dafId: simulated, amount: 20_000, donorBalance: 100_000 });
    const first = await capture({ workflowSessionId: session.id, amount: 10_000, applicationFeeAmount: 500 });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.headers.get('location')).toBe(`/v1/grants/${String(first.body.id)}`);
    expect(first.body).toMatchObject({
      workflowSessionId: session.id,
      fundId: simulated,
      amount: 10_000,
      status: 'awaiting_daf_submission',
      paymentChannel: 'dafpay_network',
      firstName: 'Ada',
      email: 'ada@example.org',
      feeDetail: { total: 500, contributions: [{ name: 'Application fee', amount: 500, feeType: 'fundraising_application' }] },
      statuses: [{ status: 'awaiting_daf_submission' }],
    });
    expect(first.body.trackingId).toMatch(/^[A-Z2-7]{10}$/);
    const replay = await capture({ workflowSessionId: session.id, amount: 20_000 });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);
    expect(await countRows('grants', 'workflow_session_id', session.id)).toBe(1);
    const events = await t.db.selectFrom('events').select('id').where('associated_object_id', '=', String(first.body.id)).execute();
    expect(events).toHaveLength(1);
    const stored = await t.db
      .selectFrom('grants')
      .select(['designation', 'application_fee'])
      .where('id', '=', String(first.body.id))
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({ designation: 'Where needed most', application_fee: '500' });
  });

  it('pays a member nonprofit directly and reports no fee when none is taken', async () => {
    const session = await authorizedSession(t.db, { connectId: memberConnectId, dafId: simulated });
    const res = await capture({ workflowSessionId: session.id, amount: 5000 });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ paymentChannel: 'direct', feeDetail: { total: 0, contributions: [] } });
  });

  it("answers 404 for an unknown session, another organization's and another environment's", async () => {
    expect((await capture({ workflowSessionId: '00000000-0000-4000-8000-000000000000', amount: 5000 })).status).toBe(404);
    expect((await capture({ workflowSessionId: 'not-a-uuid', amount: 5000 })).status).toBe(404);
    const session = await authorizedSession(t.db, { connectId, dafId: simulated });
    expect((await capture({ workflowSessionId: session.id, amount: 5000 }, other.sandbox)).status).toBe(404);
    const production = await apiRequest(server, 'production', 'POST', '/v1/grants', {
      bearer: platform.production,
      json: { workflowSessionId: session.id, amount: 5000 },
    });
    expect(production.status).toBe(404);
  });

  it('answers 410 after the capture window, 400 for a monthly session, 409 for one that became an unintegrated grant or an inactive connect', async () => {
    const expired = await authorizedSession(t.db, { connectId, dafId: simulated, now: new Date(Date.now() - 16 * 60_000) });
    expect((await capture({ workflowSessionId: expired.id, amount: 5000 })).status).toBe(410);
    const monthly = await authorizedSession(t.db, { connectId, dafId: simulated, frequency: 'monthly' });
    const wrong = await capture({ workflowSessionId: monthly.id, amount: 5000 });
    expect(wrong.status).toBe(400);
    expect(String(wrong.body.detail)).toContain('/v1/recurring_grants');
    const manual = await authorizedSession(t.db, { connectId, dafId: simulated });
    const row = await t.db
      .insertInto('unintegrated_grants')
      .values({
        environment: 'sandbox',
        organization_id: platform.id,
        connect_id: connectId,
        workflow_session_id: manual.id,
        tracking_id: 'ABCDEFGHIJ',
        fund_id: simulated,
        amount: 5000,
        metadata: '{}',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await t.db
      .updateTable('workflow_sessions')
      .set({ unintegrated_grant_id: row.id, captured_at: new Date() })
      .where('id', '=', manual.id)
      .execute();
    expect((await capture({ workflowSessionId: manual.id, amount: 5000 })).status).toBe(409);
    const inactive = await authorizedSession(t.db, { connectId: memberConnectId, dafId: simulated });
    await t.db.updateTable('connects').set({ active: false }).where('id', '=', memberConnectId).execute();
    try {
      expect((await capture({ workflowSessionId: inactive.id, amount: 5000 })).status).toBe(409);
    } finally {
      await t.db.updateTable('connects').set({ active: true }).where('id', '=', memberConnectId).execute();
    }
  });

  it('refuses amounts and fees the rules do not allow (400), and takes a fee of exactly 5%', async () => {
    const session = await authorizedSession(t.db, { connectId, dafId: simulated, amount: 10_000, donorBalance: 8000 });
    const refused = [
      { amount: 5050 },
      { amount: 500 },
      { amount: 11_000 },
      { amount: 9000 },
      { amount: 5000, applicationFeeAmount: 251 },
      { amount: 5000, applicationFeeAmount: -1 },
      { amount: 5000, applicationFeeAmount: 1.5 },
    ];
    for (const body of refused) {
      const res = await capture({ workflowSessionId: session.id, ...body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const ok = await capture({ workflowSessionId: session.id, amount: 5000, applicationFeeAmount: 250 });
    expect(ok.status).toBe(201);
  });

  it('cuts donor fields, note and designation at their maximum lengths; the body overrides the session', async () => {
    const session = await authorizedSession(t.db, { connectId, dafId: simulated, note: 'from the flow' });
    const res = await capture({
      workflowSessionId: session.id,
      amount: 5000,
      donor: { firstName: 'F'.repeat(300), address: { city: 'C'.repeat(300) } },
      note: 'n'.repeat(500),
      designation: 'd'.repeat(150),
    });
    expect(res.status).toBe(201);
    expect(res.body.firstName).toBe('F'.repeat(255));
    expect(res.body.lastName).toBe('Donor');
    expect(res.body.note).toBe('n'.repeat(400));
    expect((res.body.address as { city: string }).city).toBe('C'.repeat(255));
    const stored = await t.db.selectFrom('grants').select('designation').where('id', '=', String(res.body.id)).executeTakeFirstOrThrow();
    expect(stored.designation).toBe('d'.repeat(100));
  });

  it('makes one grant of concurrent captures: one 201, the others 409 or 200', async () => {
    const session = await authorizedSession(t.db, { connectId, dafId: simulated });
    const answers = await Promise.all(Array.from({ length: 6 }, () => capture({ workflowSessionId: session.id, amount: 5000 })));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.every((s) => [201, 200, 409].includes(s))).toBe(true);
    expect(await countRows('grants', 'workflow_session_id', session.id)).toBe(1);
  });

  it('serves the capture and the reads under 2026-01-15 in the same shapes', async () => {
    const session = await authorizedSession(t.db, { connectId, dafId: simulated });
    const headers = { 'Api-Version': '2026-01-15' };
    const created = await capture({ workflowSessionId: session.id, amount: 5000 }, platform.sandbox, headers);
    expect(created.status).toBe(201);
    expect(created.headers.get('api-version')).toBe('2026-01-15');
    // Its GrantStatus has no awaiting values: the history shows none yet.
    expect(created.body.statuses).toEqual([]);
    const read = await apiRequest(server, 'sandbox', 'GET', `/v1/grants/${String(created.body.id)}`, { bearer: platform.sandbox, headers });
    expect(read.body).toEqual(created.body);
    const dafs = await apiRequest(server, 'sandbox', 'GET', '/v1/dafs?pageLimit=2', { bearer: platform.sandbox, headers });
    expect(dafs.status).toBe(200);
    const connect = await apiRequest(server, 'sandbox', 'GET', `/v1/connects/${connectId}`, { bearer: platform.sandbox, headers });
    expect(connect.status).toBe(200);
  });

  it('does not store a capture-in-progress 409 under an Idempotency-Key: the retry gets the grant', async () => {
    const session = await authorizedSession(t.db, { connectId, dafId: simulated });
    const keys = Array.from({ length: 6 }, (_, i) => `burst-${session.id}-${i}`);
    const body = { workflowSessionId: session.id, amount: 5000 };
    const answers = await Promise.all(keys.map((key) => capture(body, platform.sandbox, { 'Idempotency-Key': key })));
    const created = answers.find((a) => a.status === 201)!;
    for (const [i, answer] of answers.entries()) {
      if (answer.status !== 409) continue;
      expect(answer.headers.get('retry-after')).toBe('1');
      const retry = await capture(body, platform.sandbox, { 'Idempotency-Key': keys[i]! });
      expect(retry.status).toBe(200);
      expect(retry.body.id).toBe(created.body.id);
    }
  });

  it('replays an Idempotency-Key', async () => {
    const session = await authorizedSession(t.db, { connectId, dafId: simulated });
    const headers = { 'Idempotency-Key': 'capture-1' };
    const first = await capture({ workflowSessionId: session.id, amount: 5000 }, platform.sandbox, headers);
    const replay = await capture({ workflowSessionId: session.id, amount: 5000 }, platform.sandbox, headers);
    expect(first.status).toBe(201);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.id).toBe(first.body.id);
  });
});

describe('POST /v1/grants at an integrated DAF', () => {
  it("records the grant request at the fund provider with the grant, waiting for a pending account's approval", async () => {
    const account = await openDonorAccount(
      t.db,
      { environment: 'sandbox', fundProviderId: provider.id },
      { donor: { email: 'pending@example.org' } },
    );
    const session = await authorizedSession(t.db, {
      connectId,
      dafId: integrated,
      donorAccountId: account.id,
      donor: { firstName: 'Pat', email: 'pending@example.org' },
    });
    const res = await capture({ workflowSessionId: session.id, amount: 7500 });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ status: 'awaiting_account_approval', donor_account_id: account.id });
    const grant = await t.db.selectFrom('grants').selectAll().where('id', '=', String(res.body.id)).executeTakeFirstOrThrow();
    const request = await t.db.selectFrom('grant_requests').selectAll().where('id', '=', grant.grant_request_id!).executeTakeFirstOrThrow();
    expect(request).toMatchObject({
      ein: '881000001',
      nonprofit_name: 'RIVER CLEANUP',
      amount_cents: '7500',
      frequency: 'one_time',
      status: 'awaiting_account_decision',
    });
    const categories = await t.db
      .selectFrom('events')
      .select(['category', 'organization_id'])
      .where('associated_object_id', 'in', [grant.id, request.id])
      .orderBy('category')
      .execute();
    expect(categories).toEqual([
      { category: 'grant.created', organization_id: platform.id },
      { category: 'grant_request.created', organization_id: provider.id },
    ]);
    // The pending account's one-time code went to the donor after the commit.
    const mail = await t.db.selectFrom('outbound_mail').select('id').where('recipient', '=', 'pending@example.org').execute();
    expect(mail.length).toBeGreaterThan(0);
  });
});

describe('POST /v1/recurring_grants', () => {
  it('creates the recurring grant and its first grant, once; a one-time session is refused', async () => {
    const account = await openDonorAccount(
      t.db,
      { environment: 'sandbox', fundProviderId: provider.id },
      { donor: { email: 'monthly@example.org' } },
    );
    const session = await authorizedSession(t.db, { connectId, dafId: integrated, frequency: 'monthly', donorAccountId: account.id });
    const body = { workflowSessionId: session.id, amount: 5000, frequency: 'MONTHLY' };
    const res = await apiRequest(server, 'sandbox', 'POST', '/v1/recurring_grants', { bearer: platform.sandbox, json: body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ workflowSessionId: session.id, frequency: 'MONTHLY', amount: 5000, fundId: integrated });
    const grants = await t.db.selectFrom('grants').selectAll().where('recurring_grant_id', '=', String(res.body.id)).execute();
    expect(grants).toHaveLength(1);
    expect(grants[0]!.workflow_session_id).toBe(session.id);
    const request = await t.db
      .selectFrom('grant_requests')
      .select('frequency')
      .where('id', '=', grants[0]!.grant_request_id!)
      .executeTakeFirstOrThrow();
    expect(request.frequency).toBe('monthly');
    const again = await apiRequest(server, 'sandbox', 'POST', '/v1/recurring_grants', { bearer: platform.sandbox, json: body });
    expect(again.status).toBe(409);
    const read = await apiRequest(server, 'sandbox', 'GET', `/v1/recurring_grants/${String(res.body.id)}`, { bearer: platform.sandbox });
    expect(read.body).toEqual(res.body);
    const list = await apiRequest(server, 'sandbox', 'GET', `/v1/recurring_grants?connect_id=${connectId}`, { bearer: platform.sandbox });
    expect((list.body.results as { id: string }[]).map((r) => r.id)).toContain(res.body.id);
    const oneTime = await authorizedSession(t.db, { connectId, dafId: simulated });
    const refused = await apiRequest(server, 'sandbox', 'POST', '/v1/recurring_grants', {
      bearer: platform.sandbox,
      json: { ...body, workflowSessionId: oneTime.id },
    });
    expect(refused.status).toBe(400);
  });
});

describe('GET /v1/unintegrated_grants', () => {
  it("lists and gets the caller's, paymentChannel offline; another's is not found", async () => {
    const session = await authorizedSession(t.db, { connectId, dafId: simulated });
    const row = await t.db
      .insertInto('unintegrated_grants')
      .values({
        environment: 'sandbox',
        organization_id: platform.id,
        connect_id: connectId,
        workflow_session_id: session.id,
        tracking_id: 'KLMNOPQRST',
        fund_id: simulated,
        amount: 6000,
        metadata: '{}',
        first_name: 'Una',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const list = await apiRequest(server, 'sandbox', 'GET', `/v1/unintegrated_grants?connect_id=${connectId}&pageLimit=1`, {
      bearer: platform.sandbox,
    });
    expect(list.status).toBe(200);
    expect(list.body.results).toEqual([
      expect.objectContaining({ id: row.id, paymentChannel: 'offline', status: 'Unknown', amount: 6000, firstName: 'Una' }),
    ]);
    const one = await apiRequest(server, 'sandbox', 'GET', `/v1/unintegrated_grants/${row.id}`, { bearer: platform.sandbox });
    expect(one.status).toBe(200);
    expect((await apiRequest(server, 'sandbox', 'GET', `/v1/unintegrated_grants/${row.id}`, { bearer: other.sandbox })).status).toBe(404);
    expect(
      (await apiRequest(server, 'sandbox', 'GET', `/v1/unintegrated_grants?connect_id=${connectId}`, { bearer: other.sandbox })).status,
    ).toBe(400);
    // A well-formed token naming an id that is no UUID is refused, never sent to the database.
    const forged = Buffer.from(JSON.stringify([new Date().toISOString(), 'not-a-uuid'])).toString('base64url');
    for (const list of ['/v1/unintegrated_grants', '/v1/recurring_grants', '/v1/grants'])
      expect((await apiRequest(server, 'sandbox', 'GET', `${list}?pageToken=${forged}`, { bearer: platform.sandbox })).status).toBe(400);
  });
});
