import { beforeAll, describe, expect, it } from 'vitest';
import { approveDonorAccount, openDonorAccount, rejectDonorAccount } from '../../src/daf/donor-accounts-service.js';
import { apiRequest } from '../helpers/gateway.js';
import { authorizedSession, dafOfFundProvider, directoryOrganizations, givingCaller, simulatedDafId } from '../helpers/giving.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/** A captured grant's life and its money (docs/giving.md, "A grant's life" and "Money"). */

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
type CallerKeys = Awaited<ReturnType<typeof givingCaller>>;
let platform: CallerKeys;
let member: CallerKeys;
let provider: CallerKeys;
let memberConnect: string;
let outsideConnect: string;
let simulated: string;
let integrated: string;
const scope = () => ({ environment: 'sandbox' as const, fundProviderId: provider.id });

beforeAll(async () => {
  const orgs = await directoryOrganizations(t.db, [
    { ein: '891000001', name: 'FOREST FRIENDS' },
    { ein: '891000002', name: 'HARBOR KITCHEN' },
  ]);
  platform = await givingCaller(t.db, '89-2000001', 'Give Platform', 'platform');
  member = await givingCaller(t.db, '89-1000002', 'Harbor Kitchen', 'nonprofit');
  provider = await givingCaller(t.db, '89-3000001', 'Lifecycle Charitable', 'fund_provider');
  const connect = async (id: string) =>
    String(
      (
        await apiRequest(server, 'sandbox', 'POST', '/v1/connects', {
          bearer: platform.sandbox,
          json: { organization_id: id, contact: { email: 'c@example.org' } },
        })
      ).body.id,
    );
  memberConnect = await connect(orgs.get('891000002')!);
  outsideConnect = await connect(orgs.get('891000001')!);
  simulated = await simulatedDafId(t.db);
  integrated = await dafOfFundProvider(t.db, provider.id);
});

async function capture(connectId: string, dafId: string, amount: number, fee = 0, donorAccountId?: string) {
  const session = await authorizedSession(t.db, { connectId, dafId, amount, donorAccountId });
  const res = await apiRequest(server, 'sandbox', 'POST', '/v1/grants', {
    bearer: platform.sandbox,
    json: { workflowSessionId: session.id, amount, applicationFeeAmount: fee },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; status: string };
}

const getGrant = async (id: string) => (await apiRequest(server, 'sandbox', 'GET', `/v1/grants/${id}`, { bearer: platform.sandbox })).body;
const updates = async (id: string) =>
  (await t.db.selectFrom('events').select('id').where('associated_object_id', '=', id).where('category', '=', 'grant.updated').execute())
    .length;
const simulate = (id: string, outcome: 'complete' | 'cancel', bearer = platform.sandbox, env: 'sandbox' | 'production' = 'sandbox') =>
  apiRequest(server, env, 'POST', `/v1/simulations/grants/${id}/${outcome}`, { bearer });

async function processingBalance(keys: CallerKeys) {
  const list = await apiRequest(server, 'sandbox', 'GET', '/v1/financial_accounts', { bearer: keys.sandbox });
  expect(list.status).toBe(200);
  const account = (list.body.results as { id: string; account_type: string }[]).find((a) => a.account_type === 'processing')!;
  const balance = await apiRequest(server, 'sandbox', 'GET', `/v1/financial_accounts/${account.id}/balance`, { bearer: keys.sandbox });
  return balance.body as { current_balance: number; available_balance: number };
}

describe("the fund provider's decisions move the grant", () => {
  it('approving the donor account readies its waiting grants; submitting the request initiates the grant', async () => {
    const account = await openDonorAccount(t.db, scope(), { donor: { email: 'approve@example.org' } });
    const grant = await capture(outsideConnect, integrated, 5000, 0, account.id);
    expect(grant.status).toBe('awaiting_account_approval');
    await t.db.transaction().execute((trx) => approveDonorAccount(trx, scope(), account, 'test'));
    expect((await getGrant(grant.id)).status).toBe('awaiting_daf_submission');
    expect(await updates(grant.id)).toBe(1);
    const row = await t.db.selectFrom('grants').select('grant_request_id').where('id', '=', grant.id).executeTakeFirstOrThrow();
    const submitted = await apiRequest(server, 'sandbox', 'POST', `/v1/grant_requests/${row.grant_request_id!}/submit`, {
      bearer: provider.sandbox,
      json: { external_grant_id: 'EXT-1' },
    });
    expect(submitted.status).toBe(200);
    const after = await getGrant(grant.id);
    expect(after).toMatchObject({ status: 'initiated', externalGrantId: 'EXT-1' });
    expect((after.statuses as { status: string }[]).map((s) => s.status)).toEqual([
      'awaiting_account_approval',
      'awaiting_daf_submission',
      'initiated',
    ]);
  });

  it('rejecting the donor account or the grant request cancels the grant', async () => {
    const account = await openDonorAccount(t.db, scope(), { donor: { email: 'reject@example.org' } });
    const waiting = await capture(outsideConnect, integrated, 5000, 0, account.id);
    await rejectDonorAccount(t.db, { ...scope(), principal: 'test' }, account.id, 'unknown donor');
    expect((await getGrant(waiting.id)).status).toBe('canceled');
    const approved = await openDonorAccount(t.db, scope(), { donor: { email: 'approved@example.org' } });
    await t.db.transaction().execute((trx) => approveDonorAccount(trx, scope(), approved, 'test'));
    const ready = await capture(outsideConnect, integrated, 5000, 0, approved.id);
    expect(ready.status).toBe('awaiting_daf_submission');
    const row = await t.db.selectFrom('grants').select('grant_request_id').where('id', '=', ready.id).executeTakeFirstOrThrow();
    const rejected = await apiRequest(server, 'sandbox', 'POST', `/v1/grant_requests/${row.grant_request_id!}/reject`, {
      bearer: provider.sandbox,
      json: { reason: 'closed fund' },
    });
    expect(rejected.status).toBe(200);
    expect((await getGrant(ready.id)).status).toBe('canceled');
  });
});

describe('the sandbox simulations and the money', () => {
  it('completing pays the member nonprofit the amount less the fee and the platform its fee, once', async () => {
    const before = { member: await processingBalance(member), platform: await processingBalance(platform) };
    const grant = await capture(memberConnect, simulated, 10_000, 400);
    const done = await simulate(grant.id, 'complete');
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.status).toBe('completed');
    expect((await processingBalance(member)).available_balance - before.member.available_balance).toBe(9600);
    expect((await processingBalance(platform)).available_balance - before.platform.available_balance).toBe(400);
    expect((await simulate(grant.id, 'complete')).status).toBe(400);
    expect((await simulate(grant.id, 'cancel')).status).toBe(400);
    const transfers = await t.db.selectFrom('ledger_transfers').select('kind').where('reference_id', '=', grant.id).execute();
    expect(transfers).toEqual([{ kind: 'grant_payment' }]);
  });

  it('moves the money once under concurrent completions', async () => {
    const grant = await capture(memberConnect, simulated, 5000);
    const answers = await Promise.all(Array.from({ length: 4 }, () => simulate(grant.id, 'complete')));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400, 400]);
    const transfers = await t.db.selectFrom('ledger_transfers').select('id').where('reference_id', '=', grant.id).execute();
    expect(transfers).toHaveLength(1);
  });

  it("pays a nonprofit not on Almoner through the DAFpay Network's account", async () => {
    const grant = await capture(outsideConnect, simulated, 3000, 100);
    expect((await simulate(grant.id, 'complete')).status).toBe(200);
    const entries = await t.db
      .selectFrom('ledger_entries as e')
      .innerJoin('ledger_transfers as x', 'x.id', 'e.transfer_id')
      .innerJoin('ledger_accounts as a', 'a.id', 'e.account_id')
      .leftJoin('platform_ledger_accounts as p', 'p.ledger_account_id', 'a.id')
      .select(['e.amount', 'p.purpose', 'a.organization_id'])
      .where('x.reference_id', '=', grant.id)
      .orderBy('e.amount')
      .execute();
    expect(entries).toEqual([
      { amount: '-3000', purpose: 'external', organization_id: null },
      { amount: '100', purpose: null, organization_id: platform.id },
      { amount: '2900', purpose: 'dafpay_network', organization_id: null },
    ]);
  });

  it("cancels; another organization's grant is not found, and production has no simulations", async () => {
    const grant = await capture(memberConnect, simulated, 5000);
    expect((await simulate(grant.id, 'cancel', member.sandbox)).status).toBe(404);
    expect((await simulate(grant.id, 'cancel', platform.production, 'production')).status).toBe(404);
    const canceled = await simulate(grant.id, 'cancel');
    expect(canceled.body.status).toBe('canceled');
    expect((canceled.body.statuses as { status: string }[]).at(-1)!.status).toBe('canceled');
    const legacy = await apiRequest(server, 'sandbox', 'GET', `/v1/grants/${grant.id}`, {
      bearer: platform.sandbox,
      headers: { 'Api-Version': '2026-01-15' },
    });
    expect((legacy.body.statuses as { status: string }[]).map((s) => s.status)).toEqual(['Canceled']);
  });

  it('keeps the grantmaking operations closed to nonprofits and platforms (403)', async () => {
    const res = await apiRequest(server, 'sandbox', 'GET', '/v1/inbound_transfers', { bearer: member.sandbox });
    expect(res.status).toBe(403);
  });
});

describe('events', () => {
  it("lets a platform subscribe to its grants' kinds and lists their events; a grantmaker's kind is refused", async () => {
    const mine = await apiRequest(server, 'sandbox', 'POST', '/v1/event_subscriptions', {
      bearer: platform.sandbox,
      json: { url: 'https://hooks.example.org/grants', category: 'grant.updated' },
    });
    expect(mine.status, JSON.stringify(mine.body)).toBe(201);
    const refused = await apiRequest(server, 'sandbox', 'POST', '/v1/event_subscriptions', {
      bearer: platform.sandbox,
      json: { url: 'https://hooks.example.org/grants', category: 'disbursement.created' },
    });
    expect(refused.status).toBe(400);
    const events = await apiRequest(server, 'sandbox', 'GET', '/v1/events?category=grant.created', { bearer: platform.sandbox });
    expect(events.status).toBe(200);
    expect((events.body.results as unknown[]).length).toBeGreaterThan(0);
  });
});
