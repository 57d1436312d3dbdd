import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { importBmfFile } from '../../src/directory/import-service.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { testBox } from '../helpers/app.js';
import { bmfLine, writeBmfFile } from '../helpers/bmf.js';
import { apiRequest } from '../helpers/gateway.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/**
 * A grantmaker's events and webhooks (docs/api.md, "Events and webhooks"): it subscribes to its
 * own categories (disbursement.*, inbound_transfer.*, verification_request.*), lists the events
 * its inbound transfers and disbursements write, and a real HTTP receiver gets them, signed, in
 * the order of each object's transitions.
 */

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const EIN = '74-1000001';
let key: string;
let nonprofitKey: string;
let fundKey: string;
let accountId: string;
let recipientId: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  await importBmfFile(t.db, writeBmfFile([bmfLine({ EIN: '840000201', NAME: 'HILLSIDE FOOD PANTRY' })]));
  recipientId = (await t.db.selectFrom('directory_organizations').select('id').where('ein', '=', '840000201').executeTakeFirstOrThrow()).id;
  await addOrganization(t.db, { ein: EIN, name: 'Meadow Foundation', kind: 'grantmaker' });
  await addOrganization(t.db, { ein: '74-1000002', name: 'Meadow Shelter', kind: 'nonprofit' });
  await addOrganization(t.db, { ein: '74-1000003', name: 'Meadow Fund', kind: 'fund_provider' });
  key = (await createApiKey(t.db, { org: EIN, environment: 'sandbox' })).key;
  nonprofitKey = (await createApiKey(t.db, { org: '74-1000002', environment: 'sandbox' })).key;
  fundKey = (await createApiKey(t.db, { org: '74-1000003', environment: 'sandbox' })).key;
  accountId = ((await call('GET', '/v1/financial_accounts')).body.results as { id: string }[])[0]!.id;
  receiver = await startReceiver();
});
afterAll(async () => receiver?.close());

function call(method: string, path: string, json?: unknown, bearer = key, version?: string) {
  return apiRequest(server, 'sandbox', method, path, { bearer, json, headers: version ? { 'api-version': version } : {} });
}

async function ok(method: string, path: string, status: number, json?: unknown) {
  const res = await call(method, path, json);
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  return res.body;
}

function dispatcher() {
  return new WebhookDispatcher({ db: t.db, box: testBox, retrySeconds: [5], timeoutMs: 2000, profile: 'dev' });
}

describe("a grantmaker's events and webhooks", () => {
  it('subscribes to its categories, lists its transfer and disbursement events, and its receiver gets them signed and in order', async () => {
    const secrets = new Map<string, string>();
    for (const category of ['inbound_transfer.created', 'inbound_transfer.updated', 'disbursement.created', 'disbursement.updated']) {
      const created = await ok('POST', '/v1/event_subscriptions', 201, { url: receiver.url, category });
      expect(created).toMatchObject({ category, status: 'active', url: receiver.url });
      secrets.set(category, created.signing_secret as string);
    }
    const listed = (await ok('GET', '/v1/event_subscriptions', 200)).results as { category: string }[];
    expect(listed.map((s) => s.category).sort()).toEqual([
      'disbursement.created',
      'disbursement.updated',
      'inbound_transfer.created',
      'inbound_transfer.updated',
    ]);

    const transfer = (await ok('POST', '/v1/inbound_transfers', 201, { amount: 50_000, account_id: accountId })).id as string;
    await ok('POST', `/v1/simulations/inbound_transfers/${transfer}/complete`, 202);
    const disbursement = (
      await ok('POST', '/v1/disbursements', 201, {
        organization_id: recipientId,
        amount: 20_000,
        transactions: [{ amount: 20_000, type: 'donor_advised_fund_grant' }],
      })
    ).id as string;
    expect((await ok('POST', `/v1/disbursements/${disbursement}/approve`, 200)).status).toBe('submitted');
    await ok('POST', `/v1/simulations/disbursements/${disbursement}/complete`, 202);

    const events = (await ok('GET', '/v1/events', 200)).results as {
      id: string;
      category: string;
      associated_object_id: string;
      associated_object_type: string;
    }[];
    // Newest first: the disbursement's completion, approval, creation; the transfer's completion, creation.
    expect(events.map((e) => [e.category, e.associated_object_id])).toEqual([
      ['disbursement.updated', disbursement],
      ['disbursement.updated', disbursement],
      ['disbursement.created', disbursement],
      ['inbound_transfer.updated', transfer],
      ['inbound_transfer.created', transfer],
    ]);
    expect(events.every((e) => e.associated_object_type === e.category.split('.')[0])).toBe(true);
    expect(await ok('GET', `/v1/events/${events[0]!.id}`, 200)).toEqual(events[0]);
    const filtered = (await ok('GET', '/v1/events?category=disbursement.created', 200)).results as { id: string }[];
    expect(filtered.map((e) => e.id)).toEqual([events[2]!.id]);

    const sender = dispatcher();
    for (let pass = 0; pass < 8; pass += 1) await sender.runOnce();
    expect(receiver.received).toHaveLength(5);
    const arrived = receiver.received.map((hook) => {
      const body = JSON.parse(hook.body) as { id: string; category: string; associated_object_id: string };
      // Signed with the secret of the category's subscription (Standard Webhooks).
      expect(() =>
        new Webhook(secrets.get(body.category)!).verify(hook.body, {
          'webhook-id': hook.headers['webhook-id'] as string,
          'webhook-timestamp': hook.headers['webhook-timestamp'] as string,
          'webhook-signature': hook.headers['webhook-signature'] as string,
        }),
      ).not.toThrow();
      return body;
    });
    const oldestFirst = [...events].reverse();
    for (const object of [transfer, disbursement]) {
      expect(arrived.filter((e) => e.associated_object_id === object).map((e) => e.id)).toEqual(
        oldestFirst.filter((e) => e.associated_object_id === object).map((e) => e.id),
      );
    }
    const statuses = await t.db.selectFrom('webhook_deliveries').select('status').execute();
    expect(statuses.map((s) => s.status)).toEqual(Array(5).fill('succeeded'));
  });

  it("refuses a category that is not a grantmaker's with a 400 naming it, and creates nothing", async () => {
    const before = await t.db.selectFrom('event_subscriptions').select('id').execute();
    const refused = await call('POST', '/v1/event_subscriptions', { url: receiver.url, category: 'donor_account.created' });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(/category donor_account\.created is not one your organization subscribes to/);
    expect(refused.body.detail).toMatch(/disbursement\.created/);
    expect(await t.db.selectFrom('event_subscriptions').select('id').execute()).toEqual(before);
    // A verification request's events are the grantmaker's too.
    expect((await call('POST', '/v1/event_subscriptions', { url: receiver.url, category: 'verification_request.updated' })).status).toBe(
      201,
    );
  });

  it("keeps the kinds apart: a fund provider does not see a grantmaker's events; a nonprofit subscribes to its giving kinds only", async () => {
    const fundEvents = await call('GET', '/v1/events', undefined, fundKey);
    expect(fundEvents.status).toBe(200);
    expect(fundEvents.body.results).toEqual([]);
    const nonprofit = await call('POST', '/v1/event_subscriptions', { url: receiver.url, category: 'disbursement.created' }, nonprofitKey);
    // Nonprofits have DAFpay giving's events (docs/giving.md), never a grantmaker's.
    expect(nonprofit.status).toBe(400);
    const nonprofitEvents = await call('GET', '/v1/events', undefined, nonprofitKey);
    expect(nonprofitEvents.status).toBe(200);
    expect(nonprofitEvents.body.results).toEqual([]);
  });

  it('serves the same events and subscriptions under 2026-01-15, whose EventCategory has the grantmaking kinds', async () => {
    const events = await call('GET', '/v1/events?category=disbursement.updated', undefined, key, '2026-01-15');
    expect(events.status).toBe(200);
    expect((events.body.results as unknown[]).length).toBe(2);
    const subscriptions = await call('GET', '/v1/event_subscriptions', undefined, key, '2026-01-15');
    expect((subscriptions.body.results as unknown[]).length).toBe(5);
  });
});
