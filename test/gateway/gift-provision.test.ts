import { beforeAll, describe, expect, it } from 'vitest';
import { requestLockbox } from '../../src/gift-processing/lockboxes-service.js';
import { apiGet, apiRequest } from '../helpers/gateway.js';
import { giftParties } from '../helpers/gift.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/** provisionMailbox (POST /v1/lockboxes/fulfill_request): a lockbox provider's one answer to a PO box request. */

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
let parties: Awaited<ReturnType<typeof giftParties>>;
let rival: Awaited<ReturnType<typeof giftParties>>;

beforeAll(async () => {
  parties = await giftParties(t.db);
  rival = await giftParties(t.db);
});

const address = { line1: 'PO Box 9876', city: 'Newark', state: 'NJ', postal_code: '07101', country: 'us' };
let nextPo = 900_000 + Math.floor(Math.random() * 90_000);
const po = () => `po_${nextPo++}`;
const fulfill = (json: unknown, bearer = parties.provider.sandbox) =>
  apiRequest(server, 'sandbox', 'POST', '/v1/lockboxes/fulfill_request', { bearer, json });
const newRequest = () =>
  requestLockbox(t.db, {
    nonprofitId: parties.nonprofit.id,
    providerId: parties.provider.id,
    providerEin: 'test',
    environment: 'sandbox',
    via: 'admin_cli',
  });

describe('POST /v1/lockboxes/fulfill_request', () => {
  it('makes the lockbox and its lockbox payment source on the processing account, answering 200 with no content', async () => {
    const requestId = await newRequest();
    expect(requestId).toMatch(/^[0-9A-Za-z_-]{32}$/);
    const locationId = po();
    const res = await fulfill({ request_id: requestId, location_id: locationId, address });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({});
    const request = await t.db.selectFrom('lockbox_requests').selectAll().where('id', '=', requestId).executeTakeFirstOrThrow();
    expect(request.fulfilled_at).not.toBeNull();
    const lockbox = await t.db.selectFrom('lockboxes').selectAll().where('id', '=', request.lockbox_id!).executeTakeFirstOrThrow();
    expect(lockbox).toMatchObject({
      location_id: locationId,
      organization_id: parties.nonprofit.id,
      provider_organization_id: parties.provider.id,
    });
    expect(lockbox.address).toEqual({ ...address, country: 'US' });
    const source = await t.db
      .selectFrom('payment_sources')
      .selectAll()
      .where('id', '=', lockbox.payment_source_id)
      .executeTakeFirstOrThrow();
    expect(source).toMatchObject({ source_type: 'lockbox', financial_account_id: parties.lockbox.financialAccountId });
    const seen = await apiGet(server, 'sandbox', `/v1/lockboxes/${lockbox.id}`, { bearer: parties.nonprofit.sandbox });
    expect(seen.status).toBe(200);
    expect(seen.body.address).toEqual({ ...address, country: 'US' });
  });

  it('refuses a fulfilled, unknown or another provider’s request_id with 400', async () => {
    const requestId = await newRequest();
    expect((await fulfill({ request_id: requestId, location_id: po(), address })).status).toBe(200);
    const again = await fulfill({ request_id: requestId, location_id: po(), address });
    expect(again.status).toBe(400);
    expect(String(again.body.detail)).toMatch(/request_id .*already fulfilled/);
    expect((await fulfill({ request_id: 'never-issued-request', location_id: po(), address })).status).toBe(400);
    const theirs = await newRequest();
    const byRival = await fulfill({ request_id: theirs, location_id: po(), address }, rival.provider.sandbox);
    expect(byRival.status).toBe(400);
    // Still open for its own provider.
    expect((await fulfill({ request_id: theirs, location_id: po(), address })).status).toBe(200);
  });

  it('refuses a location the provider already has (400), leaving the request open', async () => {
    const requestId = await newRequest();
    const taken = await fulfill({ request_id: requestId, location_id: parties.lockbox.locationId, address });
    expect(taken.status).toBe(400);
    expect(String(taken.body.detail)).toMatch(/already one of this provider's lockboxes/);
    expect((await fulfill({ request_id: requestId, location_id: po(), address })).status).toBe(200);
  });

  it('refuses a malformed body with 400, a nonprofit with 403, the production key with 400', async () => {
    const requestId = await newRequest();
    expect((await fulfill({ request_id: requestId, location_id: '543', address })).status).toBe(400);
    expect((await fulfill({ request_id: requestId, location_id: po(), address: { ...address, country: 'USA' } })).status).toBe(400);
    expect((await fulfill({ request_id: requestId, location_id: po() })).status).toBe(400);
    expect((await fulfill({ request_id: requestId, location_id: po(), address }, parties.nonprofit.sandbox)).status).toBe(403);
    const production = await apiRequest(server, 'production', 'POST', '/v1/lockboxes/fulfill_request', {
      bearer: parties.provider.production,
      json: { request_id: requestId, location_id: po(), address },
    });
    expect(production.status).toBe(400);
  });

  it('makes exactly one lockbox of a concurrent burst with the same request_id', async () => {
    const requestId = await newRequest();
    const answers = await Promise.all(Array.from({ length: 8 }, () => fulfill({ request_id: requestId, location_id: po(), address })));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 400)).toHaveLength(7);
    const lockboxes = await t.db.selectFrom('lockboxes').select('id').where('request_id', '=', requestId).execute();
    expect(lockboxes).toHaveLength(1);
    const sources = await t.db
      .selectFrom('payment_sources')
      .select('id')
      .where('organization_id', '=', parties.nonprofit.id)
      .where('source_type', '=', 'lockbox')
      .execute();
    const boxes = await t.db.selectFrom('lockboxes').select('id').where('organization_id', '=', parties.nonprofit.id).execute();
    // No payment source without its lockbox.
    expect(sources).toHaveLength(boxes.length);
  });
});
