/**
 * Attack: the API key of a tenant without events (a lockbox provider), or any application holding a read_write token, registers
 * webhook subscriptions, though events exist only for fund providers: an outbound-request
 * surface (the server would POST to URLs of the caller's choosing) and stored state with no
 * purpose, open to every tenant and every third-party application.
 * Protection: every event-subscription operation is for fund providers calling with their
 * organization's API key, the rule the DAF APIs already follow (route spec callers:
 * 'fund_provider'); anyone else gets 403 and nothing is created, changed or shown.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { accessToken, apiRequest } from '../helpers/gateway.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const { testDatabase: t, server, staff: nonprofit } = useOAuthServer();
let fundKey: string;
const REDIRECT = 'http://127.0.0.1:9999/callback';

beforeAll(async () => {
  // A kind without events: nonprofits have DAFpay giving's (docs/giving.md), lockbox providers none.
  await t.db.updateTable('organizations').set({ kind: 'lockbox_provider' }).where('id', '=', nonprofit.orgId).execute();
  await addOrganization(t.db, { ein: '98-3330001', name: 'Subscriber Fund', kind: 'fund_provider' });
  fundKey = (await createApiKey(t.db, { org: '98-3330001', environment: 'sandbox' })).key;
});
const call = (bearer: string, method: string, path: string, body?: unknown, version?: string) =>
  apiRequest(server, 'sandbox', method, path, { bearer, json: body, headers: version ? { 'api-version': version } : {} });

const subscription = { url: 'http://127.0.0.1:9/hook', category: 'donor_account.created' };
const count = async () =>
  Number(
    (
      await t.db
        .selectFrom('event_subscriptions')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('event subscriptions', () => {
  it('refuses every operation to the API key of a kind without events and to a read_write access token, in both API versions, creating nothing', async () => {
    const mine = await call(fundKey, 'POST', '/v1/event_subscriptions', subscription);
    expect(mine.status).toBe(201);
    const before = await count();

    const nonprofitKey = (await createApiKey(t.db, { org: nonprofit.ein, environment: 'sandbox' })).key;
    const client = await server.registerClient({ environment: 'sandbox', redirectUris: [REDIRECT] });
    const token = await accessToken(server, client, {
      environment: 'sandbox',
      redirectUri: REDIRECT,
      scope: 'read_only read_write',
      login: nonprofit.users.member,
    });
    for (const bearer of [nonprofitKey, token]) {
      for (const version of ['2026-04-01', '2026-01-15']) {
        const attempts = [
          await call(bearer, 'POST', '/v1/event_subscriptions', subscription, version),
          await call(bearer, 'GET', '/v1/event_subscriptions', undefined, version),
          await call(bearer, 'GET', `/v1/event_subscriptions/${mine.body.id as string}`, undefined, version),
          await call(bearer, 'PATCH', `/v1/event_subscriptions/${mine.body.id as string}`, { status: 'deleted' }, version),
        ];
        for (const answer of attempts) {
          expect(answer.status).toBe(403);
          expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
          expect(answer.body).toMatchObject({ status: 403, detail: expect.stringMatching(/donor-advised-fund providers/) });
          expect(JSON.stringify(answer.body)).not.toContain(mine.body.id as string);
        }
      }
    }
    expect(await count()).toBe(before);
    expect((await call(fundKey, 'GET', `/v1/event_subscriptions/${mine.body.id as string}`)).body.status).toBe('active');
  });

  it("serves a fund provider's API key; under 2026-01-15, whose categories predate the donor-account kinds, those subscriptions and events do not exist", async () => {
    const created = await call(fundKey, 'POST', '/v1/event_subscriptions', { ...subscription, category: 'grant_request.created' });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(((await call(fundKey, 'GET', '/v1/event_subscriptions')).body.results as { id: string }[]).map((r) => r.id)).toContain(id);
    expect((await call(fundKey, 'PATCH', `/v1/event_subscriptions/${id}`, { status: 'disabled' })).body.status).toBe('disabled');

    const older = '2026-01-15';
    const refused = await call(fundKey, 'POST', '/v1/event_subscriptions', { ...subscription, category: 'grant_request.created' }, older);
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(/grant_request\.created does not exist in API version 2026-01-15/);
    const listed = await call(fundKey, 'GET', '/v1/event_subscriptions', undefined, older);
    expect(listed.status).toBe(200);
    expect(listed.body.results).toEqual([]);
    expect((await call(fundKey, 'GET', `/v1/event_subscriptions/${id}`, undefined, older)).status).toBe(404);
    expect((await call(fundKey, 'PATCH', `/v1/event_subscriptions/${id}`, { status: 'active' }, older)).status).toBe(404);
    expect((await call(fundKey, 'GET', `/v1/event_subscriptions/${id}`)).body.status).toBe('disabled');
    // A donor account's creation writes a donor_account.created event.
    expect((await call(fundKey, 'POST', '/v1/donor_accounts', { donor: { email: 'versions@example.org' } })).status).toBe(201);
    const current = (await call(fundKey, 'GET', '/v1/events')).body.results as { id: string; category: string }[];
    const event = current.find((e) => e.category === 'donor_account.created');
    expect(event).toBeDefined();
    const events = await call(fundKey, 'GET', '/v1/events', undefined, older);
    expect(events.status).toBe(200);
    expect(events.body.results).toEqual([]);
    expect((await call(fundKey, 'GET', `/v1/events/${event!.id}`, undefined, older)).status).toBe(404);
    expect((await call(fundKey, 'GET', `/v1/events/${event!.id}`)).status).toBe(200);
    expect((await call(fundKey, 'GET', '/v1/events?category=grant_request.created', undefined, older)).status).toBe(400);
  });
});
