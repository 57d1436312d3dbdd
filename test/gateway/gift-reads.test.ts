import { beforeAll, describe, expect, it } from 'vitest';
import { addPaymentSource } from '../../src/gift-processing/payment-sources-service.js';
import { accessToken, apiGet, apiKeyFor } from '../helpers/gateway.js';
import { createTestLockbox, giftParties, type TestLockbox } from '../helpers/gift.js';
import { insertDeposit, insertDonation, insertMailItem } from '../helpers/gift-records.js';
import { givingCaller } from '../helpers/giving.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/** Gift processing's reads (docs/gift-processing.md, "The API"): payment sources, lockboxes, mail items, deposits, donations. */

const REDIRECT = 'https://app.example.org/callback';
const {
  testDatabase: t,
  server,
  staff,
  clients: { client },
} = useOAuthServer({
  clients: { client: { environment: 'sandbox', redirectUris: [REDIRECT], scopes: ['read_only', 'read_write', 'openid'] } },
});

let key: string;
let provider: Awaited<ReturnType<typeof givingCaller>>;
let lockbox: TestLockbox;
let other: Awaited<ReturnType<typeof giftParties>>;
const minute = 60_000;
const base = Date.now() - 100 * minute;

beforeAll(async () => {
  key = await apiKeyFor(t.db, staff, 'sandbox');
  provider = await givingCaller(t.db, '72-3000001', 'Keystone Lockbox Services', 'lockbox_provider');
  lockbox = await createTestLockbox(t.db, { nonprofitId: staff.orgId, providerId: provider.id });
  other = await giftParties(t.db);
});

const get = (path: string, bearer = key, version?: string) =>
  apiGet(server, 'sandbox', path, { bearer, headers: version ? { 'api-version': version } : {} });

describe('payment sources and lockboxes', () => {
  it('lists the nonprofit’s payment sources newest first with their lockbox and ACH address, paged', async () => {
    const manual = await addPaymentSource(t.db, {
      organizationId: staff.orgId,
      environment: 'sandbox',
      name: 'Gifts by wire',
      sourceType: 'manual',
      ach: { accountNumber: '123456789', routingNumber: '021000021' },
      via: 'admin_cli',
    });
    const page = await get('/v1/payment_sources');
    expect(page.status).toBe(200);
    const results = page.body.results as Record<string, unknown>[];
    expect(results.map((r) => r.id)).toEqual([manual.id, lockbox.paymentSourceId]);
    expect(results[0]).toMatchObject({
      source_type: 'manual',
      financial_account_id: lockbox.financialAccountId,
      financial_address: { ach: { account_number: '123456789', routing_number: '021000021', institution_name: expect.any(String) } },
    });
    expect(results[0]!.lockbox).toBeUndefined();
    expect(results[1]).toMatchObject({ source_type: 'lockbox', lockbox: { id: lockbox.id, address: { country: 'US' } } });
    const first = await get('/v1/payment_sources?limit=1');
    expect((first.body.results as { id: string }[]).map((r) => r.id)).toEqual([manual.id]);
    const second = await get(`/v1/payment_sources?limit=1&page_token=${String(first.body.next_page_token)}`);
    expect((second.body.results as { id: string }[]).map((r) => r.id)).toEqual([lockbox.paymentSourceId]);
    expect(second.body.next_page_token).toBeUndefined();
    // 2026-01-15's lockbox is its address only.
    const older = await get(`/v1/payment_sources/${lockbox.paymentSourceId}`, key, '2026-01-15');
    expect(older.status).toBe(200);
    expect(older.body.lockbox).toEqual({ address: expect.objectContaining({ country: 'US' }) });
  });

  it('reads lockboxes under 2026-04-01 only; another organization’s or environment’s ids are 404', async () => {
    const list = await get('/v1/lockboxes');
    expect((list.body.results as { id: string }[]).map((r) => r.id)).toEqual([lockbox.id]);
    const one = await get(`/v1/lockboxes/${lockbox.id}`);
    expect(one.body).toMatchObject({ id: lockbox.id, address: { line1: `PO Box ${lockbox.locationId.slice(3)}` } });
    expect((await get(`/v1/lockboxes/${other.lockbox.id}`)).status).toBe(404);
    expect((await get(`/v1/payment_sources/${other.lockbox.paymentSourceId}`)).status).toBe(404);
    expect((await get('/v1/lockboxes', key, '2026-01-15')).status).toBe(404);
    const production = await apiGet(server, 'production', `/v1/lockboxes/${lockbox.id}`, {
      bearer: await apiKeyFor(t.db, staff, 'production'),
    });
    expect(production.status).toBe(404);
  });

  it('refuses a lockbox provider (403) and bad paging (400)', async () => {
    for (const path of ['/v1/payment_sources', '/v1/lockboxes', '/v1/mail_items', '/v1/deposits', '/v1/properties'])
      expect((await get(path, provider.sandbox)).status, path).toBe(403);
    expect((await get('/v1/lockboxes?limit=0')).status).toBe(400);
    expect((await get('/v1/lockboxes?limit=101')).status).toBe(400);
    expect((await get('/v1/lockboxes?page_token=nonsense')).status).toBe(400);
  });
});

describe('mail items', () => {
  let ids: { id: string; scans: { file_id: string }[] }[];
  beforeAll(async () => {
    const statuses = ['processed', 'needs_review', 'rejected', 'processing'] as const;
    ids = [];
    for (const [i, status] of statuses.entries())
      ids.push(
        await insertMailItem(t.db, {
          nonprofitId: staff.orgId,
          providerId: provider.id,
          lockbox,
          status,
          createdAt: new Date(base + i * minute),
          scans: i === 0 ? 2 : 1,
        }),
      );
  });

  it('lists newest first with scans newest first; filters by status.in, lockbox and created_at', async () => {
    const all = await get('/v1/mail_items');
    expect(all.status).toBe(200);
    const results = all.body.results as { id: string; status: string; scans: { file_id: string }[] }[];
    expect(results.map((r) => r.id)).toEqual(ids.map((i) => i.id).reverse());
    const oldest = results.at(-1)!;
    expect(oldest.scans.map((s) => s.file_id)).toEqual(ids[0]!.scans.map((s) => s.file_id).reverse());
    const review = await get('/v1/mail_items?status.in=needs_review,processing');
    expect((review.body.results as { status: string }[]).map((r) => r.status)).toEqual(['processing', 'needs_review']);
    const after = await get(`/v1/mail_items?created_at.after=${encodeURIComponent(new Date(base + 1.5 * minute).toISOString())}`);
    expect((after.body.results as unknown[]).length).toBe(2);
    const before = await get(`/v1/mail_items?created_at.before=${encodeURIComponent(new Date(base + 0.5 * minute).toISOString())}`);
    expect((before.body.results as { id: string }[]).map((r) => r.id)).toEqual([ids[0]!.id]);
    expect(((await get(`/v1/mail_items?lockbox_id=${other.lockbox.id}`)).body.results as unknown[]).length).toBe(0);
    const bad = await get('/v1/mail_items?status.in=processed,lost');
    expect(bad.status).toBe(400);
    expect(String(bad.body.detail)).toMatch(/lost/);
  });

  it('gets one with its scans; another organization’s is 404', async () => {
    const one = await get(`/v1/mail_items/${ids[0]!.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: ids[0]!.id, lockbox_id: lockbox.id, status: 'processed' });
    expect((one.body.scans as unknown[]).length).toBe(2);
    const theirs = await insertMailItem(t.db, { nonprofitId: other.nonprofit.id, providerId: other.provider.id, lockbox: other.lockbox });
    expect((await get(`/v1/mail_items/${theirs.id}`)).status).toBe(404);
  });

  it('takes an access token with read_only', async () => {
    const token = await accessToken(server, client, {
      environment: 'sandbox',
      redirectUri: REDIRECT,
      scope: 'read_only',
      login: staff.users.read_only,
    });
    const res = await get(`/v1/mail_items/${ids[1]!.id}`, token);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('needs_review');
  });
});

describe('deposits and donations', () => {
  let deposits: string[];
  let donation: string;
  beforeAll(async () => {
    const account = { nonprofitId: staff.orgId, paymentSourceId: lockbox.paymentSourceId, financialAccountId: lockbox.financialAccountId };
    deposits = [
      await insertDeposit(t.db, { ...account, createdAt: new Date(base), settledAt: new Date(base + minute) }),
      await insertDeposit(t.db, {
        ...account,
        createdAt: new Date(base + 2 * minute),
        rail: 'inbound_ach_transfer',
        railDetails: { trace_number: '021000020000001', status: 'accepted', unknown_member: 'x' },
        settledAt: null,
        status: 'pending',
      }),
    ];
    donation = await insertDonation(t.db, {
      nonprofitId: staff.orgId,
      paymentSourceId: lockbox.paymentSourceId,
      depositId: deposits[0]!,
      settlementReceivedAt: new Date(base),
      settlementSettledAt: new Date(base + minute),
      individualGiftAmount: 10_000,
      extra: {
        joint_donor: { first_name: 'Charles', last_name: 'Babbage' },
        corporate_match: { match_amount: 2_500, company_name: 'Analytical Engines' },
        donor_advised_fund_grant: { organization_name: 'Community Fund', sponsor_grant_id: 'G-1' },
      },
    });
  });

  it('lists deposits newest first with their transfer; filters by payment source and settled_at', async () => {
    const all = await get('/v1/deposits');
    expect(all.status).toBe(200);
    const results = all.body.results as Record<string, unknown>[];
    expect(results.map((r) => r.id)).toEqual([...deposits].reverse());
    expect(results[0]).toMatchObject({
      status: 'pending',
      transfer: { amount: 12_500, currency: 'USD', inbound_ach_transfer: { trace_number: '021000020000001', status: 'accepted' } },
      properties: [],
    });
    expect((results[0]!.transfer as Record<string, Record<string, unknown>>).inbound_ach_transfer!.unknown_member).toBeUndefined();
    expect(results[1]).toMatchObject({ transfer: { check_deposit: { auxiliary_on_us: '1042', status: 'deposited' } } });
    const settled = await get(`/v1/deposits?settled_at.after=${encodeURIComponent(new Date(base).toISOString())}`);
    expect((settled.body.results as { id: string }[]).map((r) => r.id)).toEqual([deposits[0]]);
    const bySource = await get(`/v1/deposits?payment_source_id=${other.lockbox.paymentSourceId},nothing`);
    expect((bySource.body.results as unknown[]).length).toBe(0);
    const older = await get(`/v1/deposits/${deposits[0]!}`, key, '2026-01-15');
    expect(older.status).toBe(200);
    expect(older.body.settled_at).toBe(new Date(base + minute).toISOString());
  });

  it('serves the donation’s 2026-04-01 parts: settlement, attribution with joint donor, grant, match, gift amount', async () => {
    const one = await get(`/v1/donations/${donation}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      individual_gift_amount: 10_000,
      settlement: {
        deposit_id: deposits[0],
        received_at: new Date(base).toISOString(),
        settled_at: new Date(base + minute).toISOString(),
      },
      attribution: { primary_donor: { first_name: 'Ada' }, joint_donor: { first_name: 'Charles' } },
      corporate_match: { match_amount: 2_500 },
      donor_advised_fund_grant: { organization_name: 'Community Fund' },
      properties: [],
    });
    const byDeposit = await get(`/v1/donations?deposit_id=${deposits[0]!}`);
    expect((byDeposit.body.results as { id: string }[]).map((r) => r.id)).toEqual([donation]);
    const older = await get(`/v1/donations/${donation}`, key, '2026-01-15');
    expect(older.body.external_id).toBeUndefined();
    expect(older.body.settlement).toMatchObject({ deposit_id: deposits[0] });
  });

  it('keeps another organization’s deposits and donations 404', async () => {
    const theirs = await insertDeposit(t.db, {
      nonprofitId: other.nonprofit.id,
      paymentSourceId: other.lockbox.paymentSourceId,
      financialAccountId: other.lockbox.financialAccountId,
    });
    expect((await get(`/v1/deposits/${theirs}`)).status).toBe(404);
    const theirDonation = await insertDonation(t.db, { nonprofitId: other.nonprofit.id, paymentSourceId: other.lockbox.paymentSourceId });
    expect((await get(`/v1/donations/${theirDonation}`)).status).toBe(404);
    expect((await get(`/v1/donations/${theirDonation}`, other.nonprofit.sandbox)).status).toBe(200);
  });
});
