import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { endpoints } from '../helpers/flow.js';
import { apiRequest, type ApiResponse } from '../helpers/gateway.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { dafVerifyFailures } from '../../src/limits/rate-limits.js';

/**
 * Every problem document of the gateway carries the stable `code` of the error vocabulary
 * (src/errors/codes.ts) beside its status, whichever layer raised it: the router, a route, or a
 * service's domain error (the unique-violation mapper included).
 */

const { testDatabase: t, server } = useOAuthServer();
const FUND_EIN = '98-2345678';
let key: string;
let fundProviderId: string;

beforeAll(async () => {
  fundProviderId = (await addOrganization(t.db, { ein: FUND_EIN, name: 'Codes Giving Fund', kind: 'fund_provider' })).id;
  key = (await createApiKey(t.db, { org: FUND_EIN, environment: 'sandbox' })).key;
});

function call(method: string, path: string, body?: unknown, bearer = key) {
  return apiRequest(server, 'sandbox', method, path, { bearer, json: body });
}

function expectProblem(res: ApiResponse, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code });
}

async function donorAccount(email: string): Promise<string> {
  const res = await call('POST', '/v1/donor_accounts', { donor: { email } });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

describe('stable error codes in problem documents', () => {
  it('404: an unknown route, an unknown resource, and an unknown verification code are not_found', async () => {
    expectProblem(await call('GET', '/v1/no_such_things'), 404, 'not_found');
    expectProblem(await call('GET', '/v1/donor_accounts/donor_account_00000000000000000000000000'), 404, 'not_found');
    expectProblem(await call('POST', '/v1/authorization_tokens/verify', { code: 'ZZZZZZZZZZZZ' }), 404, 'not_found');
  });

  it('405 on a known path is method_not_allowed; a JSON client of the hosted pages gets codes too', async () => {
    // Plain fetch: the published documents have no DELETE there, and the response check expects only 404 (a 405 is not listed in published-additions.ts).
    const wrongMethod = await fetch(`${endpoints(server, 'sandbox').api}/v1/donor_accounts`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await wrongMethod.json()).toMatchObject({ status: 405, code: 'method_not_allowed' });
    const page = await fetch(`${endpoints(server, 'sandbox').dashboard}/no/such/page`, { headers: { accept: 'application/json' } });
    expect(page.status).toBe(404);
    expect(page.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await page.json()).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('501 for a method no route implements is not_implemented, not internal', async () => {
    // Plain fetch: no published operation answers PROPFIND.
    const unknown = await fetch(`${endpoints(server, 'sandbox').api}/v1/donor_accounts`, {
      method: 'PROPFIND',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(unknown.status).toBe(501);
    expect(unknown.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await unknown.json()).toMatchObject({ status: 501, title: 'Not Implemented', code: 'not_implemented' });
  });

  it('401 is unauthenticated, 400 invalid', async () => {
    expectProblem(await call('GET', '/v1/donor_accounts', undefined, 'alm_test_nope'), 401, 'unauthenticated');
    expectProblem(await call('POST', '/v1/donor_accounts', { donor: { email: 'not an address' } }), 400, 'invalid');
  });

  it('409: a duplicate donor account is conflict, also when only the unique constraint catches it', async () => {
    const email = 'twice@example.org';
    await donorAccount(email);
    const again = await call('POST', '/v1/donor_accounts', { donor: { email } });
    expectProblem(again, 409, 'conflict');

    // A concurrent insert of the same email, not yet committed: the service's own check cannot
    // see it, so the insert waits on the unique index and fails with a unique violation once
    // the other commits. The constraint mapper turns that into the same conflict.
    const raced = 'raced@example.org';
    let pending: Promise<ApiResponse> | undefined;
    let settled = false;
    await t.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('donor_accounts')
        .values({ id: 'donor_account_racedracedracedracedraced00', environment: 'sandbox', fund_provider_id: fundProviderId, email: raced })
        .execute();
      pending = call('POST', '/v1/donor_accounts', { donor: { email: raced } }).finally(() => (settled = true));
      // Commit only once the request's insert is waiting for this transaction.
      for (let i = 0; !settled; i += 1) {
        const { rows } = await sql<{
          waiting: number;
        }>`select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike '%insert into "donor_accounts"%'`.execute(
          t.db,
        );
        if (rows[0]!.waiting > 0) break;
        if (i > 1000) throw new Error('the request never waited on the unique index');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    });
    const res = await pending!;
    expectProblem(res, 409, 'conflict');
    // The mapper's message (the pre-check's names the existing account).
    expect(res.body.detail).toBe(`A donor account for ${raced} already exists.`);
  });

  it('412: revoking a token that is no longer pending is precondition', async () => {
    const id = await donorAccount('precondition@example.org');
    const token = (await call('POST', `/v1/donor_accounts/${id}/authorization_tokens`, {})).body.id as string;
    await t.db
      .updateTable('donor_authorization_tokens')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', token)
      .execute();
    const res = await call('POST', `/v1/authorization_tokens/${token}/revoke`);
    expectProblem(res, 412, 'precondition');
    expect(res.body.title).toBe('Precondition Failed');
  });

  it('429: verify attempts past the limit are rate_limited, with Retry-After', async () => {
    const limited = (await createApiKey(t.db, { org: FUND_EIN, environment: 'production' })).key;
    const verify = (i: number) =>
      apiRequest(server, 'production', 'POST', '/v1/authorization_tokens/verify', { bearer: limited, json: { code: `WRONG${i}` } });
    for (let i = 0; i < dafVerifyFailures.max; i += 1) expectProblem(await verify(i), 404, 'not_found');
    const res = await verify(dafVerifyFailures.max);
    expectProblem(res, 429, 'rate_limited');
    expect(res.body.title).toBe('Too Many Requests');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
