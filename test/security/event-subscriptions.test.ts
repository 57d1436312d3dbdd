/**
 * Attack: a nonprofit's API key, or any application holding a read_write token, registers
 * webhook subscriptions, though events exist only for fund providers: an outbound-request
 * surface (the server would POST to URLs of the caller's choosing) and stored state with no
 * purpose, open to every tenant and every third-party application.
 * Protection: every event-subscription operation is for fund providers calling with their
 * organization's API key, the rule the DAF APIs already follow (route spec callers:
 * 'fund_provider'); anyone else gets 403 and nothing is created, changed or shown.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/gateway/api-keys/service.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { endpoints } from '../helpers/flow.js';
import { accessToken } from '../helpers/gateway.js';
import { createStaff, startOAuthServer, type OAuthTestServer, type Staff } from '../helpers/oauth-server.js';

let t: TestDatabase;
let server: OAuthTestServer;
let nonprofit: Staff;
let fundKey: string;
const REDIRECT = 'http://127.0.0.1:9999/callback';

beforeAll(async () => {
  t = await createTestDatabase();
  server = await startOAuthServer(t.db);
  nonprofit = await createStaff(t.db);
  await addOrganization(t.db, { ein: '98-3330001', name: 'Subscriber Fund', kind: 'fund_provider' });
  fundKey = (await createApiKey(t.db, { org: '98-3330001', environment: 'sandbox' })).key;
});
afterAll(async () => {
  await server?.close();
  await t?.drop();
});

async function call(bearer: string, method: string, path: string, body?: unknown, version?: string) {
  const response = await fetch(`${endpoints(server, 'sandbox').api}${path}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(version ? { 'api-version': version } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

const subscription = { url: 'http://127.0.0.1:9/hook', category: 'donor_account.created' };
const count = async () => Number((await t.db.selectFrom('event_subscriptions').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);

describe('event subscriptions', () => {
  it('refuses every operation to a nonprofit API key and to a read_write access token, in both API versions, creating nothing', async () => {
    const mine = await call(fundKey, 'POST', '/v1/event_subscriptions', subscription);
    expect(mine.status).toBe(201);
    const before = await count();

    const nonprofitKey = (await createApiKey(t.db, { org: nonprofit.ein, environment: 'sandbox' })).key;
    const client = await server.registerClient({ environment: 'sandbox', redirectUris: [REDIRECT] });
    const token = await accessToken(server, client, { environment: 'sandbox', redirectUri: REDIRECT, scope: 'read_only read_write', login: nonprofit.users.member });
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

  it('still serves a fund provider\'s API key in both API versions', async () => {
    for (const version of ['2026-04-01', '2026-01-15']) {
      const created = await call(fundKey, 'POST', '/v1/event_subscriptions', { ...subscription, category: 'grant_request.created' }, version);
      expect(created.status).toBe(201);
      expect((await call(fundKey, 'GET', '/v1/event_subscriptions', undefined, version)).status).toBe(200);
      expect((await call(fundKey, 'PATCH', `/v1/event_subscriptions/${created.body.id as string}`, { status: 'disabled' }, version)).body.status).toBe('disabled');
    }
  });
});
