/**
 * Attack: send U+0000 (JSON's escaped \u0000) in a JSON request body. PostgreSQL cannot store
 * it in text or jsonb (22P05, 22021), so a value that reaches the database turned into a 500;
 * the same hole lets a caller probe which fields reach which column.
 * Protection: the JSON body parser refuses any body with U+0000 anywhere (keys or values, at
 * any depth) with a 400 problem, before any handler runs; nothing is written.
 * The property test over every operation's body is in test/reliability/hostile-input.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { apiRequest } from '../helpers/gateway.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
let key: string;
let accountId: string;

beforeAll(async () => {
  await addOrganization(t.db, { ein: '98-4440001', name: 'Nul Fund', kind: 'fund_provider' });
  key = (await createApiKey(t.db, { org: '98-4440001', environment: 'sandbox' })).key;
  accountId = (await call('POST', '/v1/donor_accounts', JSON.stringify({ donor: { email: 'nul@example.org' }, metadata: { k: 'before' } })))
    .body.id as string;
});
const call = (method: string, path: string, body?: string) => apiRequest(server, 'sandbox', method, path, { bearer: key, rawJson: body });

function expectNulRefused(answer: Awaited<ReturnType<typeof call>>) {
  expect(answer.status).toBe(400);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(answer.body).toMatchObject({ type: 'about:blank', title: 'Bad Request', status: 400, detail: expect.stringMatching(/U\+0000/) });
}

describe('U+0000 in a JSON body', () => {
  it('PATCH /v1/donor_accounts/{id} with {"metadata":{"k":"v\\u0000"}} is a 400 problem and changes nothing', async () => {
    // Written out, as a client would send it: the six characters \u0000 inside the string.
    const body = '{"metadata":{"k":"v\\u0000"}}';
    expect(JSON.parse(body)).toEqual({ metadata: { k: 'v\u0000' } });
    expectNulRefused(await call('PATCH', `/v1/donor_accounts/${accountId}`, body));
    expect((await call('GET', `/v1/donor_accounts/${accountId}`)).body.metadata).toEqual({ k: 'before' });
  });

  it('is refused in keys and values at any depth, in known and unknown fields, on every kind of operation', async () => {
    const cases: [string, string, unknown][] = [
      ['PATCH', `/v1/donor_accounts/${accountId}`, { metadata: { 'k\u0000': 'v' } }],
      ['PATCH', `/v1/donor_accounts/${accountId}`, { donor: { first_name: '\u0000' } }],
      ['PATCH', `/v1/donor_accounts/${accountId}`, { unknown: [[{ deep: ['x', { y: 'a\u0000b' }] }]] }],
      ['POST', '/v1/donor_accounts', { donor: { email: 'nul2@example.org', last_name: 'x\u0000' } }],
      ['POST', `/v1/donor_accounts/${accountId}/authorization_tokens`, { metadata: { a: '\u0000' } }],
      ['POST', '/v1/authorization_tokens/verify', { code: 'ABCD\u0000EFGH' }],
      ['POST', '/v1/event_subscriptions', { url: 'http://127.0.0.1:9/\u0000', category: 'donor_account.created' }],
      ['POST', '/v1/event_subscriptions', { '\u0000': 1 }],
    ];
    for (const [method, path, value] of cases) expectNulRefused(await call(method, path, JSON.stringify(value)));
    // Nothing was created on the way.
    expect((await call('GET', '/v1/donor_accounts?email=nul2@example.org')).body.results).toEqual([]);
    expect((await call('GET', '/v1/event_subscriptions')).body.results).toEqual([]);
  });

  it('accepts the text \\u0000 written with an escaped backslash, which is not a NUL', async () => {
    const answer = await call('PATCH', `/v1/donor_accounts/${accountId}`, '{"metadata":{"k":"\\\\u0000"}}');
    expect(answer.status).toBe(200);
    expect(answer.body.metadata).toEqual({ k: '\\u0000' });
  });
});
