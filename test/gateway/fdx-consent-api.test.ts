import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { expireDueConsents } from '../../src/authorizations/fdx-consents.js';
import { apiGet, apiRequest, type ApiResponse } from '../helpers/gateway.js';
import { fdxClient, fdxGet, fdxToken, seedBank } from '../helpers/fdx.js';
import { ALL_ACCOUNT_CLUSTERS, consentedToken } from '../helpers/fdx-consent.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/** The FDX 6.3 Consent API (docs/api.md, "FDX bank-data API", Consent API). */
const { testDatabase: t, server, staff } = useOAuthServer();
let accounts: string[];

beforeAll(async () => {
  accounts = (await seedBank(t.db, staff, 'production', { accounts: 2, transactionsPerAccount: 2 })).account_ids;
});

const everything = { resources: [{ resourceType: 'ACCOUNT', dataClusters: ALL_ACCOUNT_CLUSTERS }, { resourceType: 'CUSTOMER', dataClusters: ['CUSTOMER_CONTACT'] }] };
const get = (path: string, token: string) => fdxGet(server, path, token);
const revoke = (id: string, token: string, body: { json?: unknown; rawJson?: string } = { json: { reason: 'USER_ACTION', initiator: 'INDIVIDUAL' } }) =>
  apiRequest(server, 'production', 'PUT', `/fdx/v6/consents/${id}/revocation`, { bearer: token, ...body });
const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function expectFdxProblem(res: ApiResponse, status: number, detail: RegExp) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code: status, detail: expect.stringMatching(detail) });
}

describe('GET /fdx/v6/consents/{consentId}', () => {
  it('gives its recipient the ConsentGrant: parties, times, duration, lookback and what was granted', async () => {
    const { token, client, consent } = await consentedToken(t.db, server, staff, { lookbackPeriod: 90, ...everything }, [accounts[1]!, accounts[0]!]);
    const names = await t.db.selectFrom('oauth_clients').select('name').where('client_id', '=', client.client_id).executeTakeFirstOrThrow();
    const organization = await t.db.selectFrom('organizations').select('name').where('id', '=', staff.orgId).executeTakeFirstOrThrow();
    const res = await get(`/consents/${consent.id}`, token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: consent.id,
      status: 'ACTIVE',
      parties: [
        { name: names.name, type: 'DATA_RECIPIENT' },
        { name: organization.name, type: 'DATA_PROVIDER' },
      ],
      createdTime: consent.createdAt.toISOString(),
      updatedTime: consent.createdAt.toISOString(),
      expirationTime: new Date(consent.createdAt.getTime() + 30 * 86_400_000).toISOString(),
      durationType: 'TIME_BOUND',
      durationPeriod: 30,
      lookbackPeriod: 90,
      resources: [
        { resourceType: 'ACCOUNT', resourceId: accounts[1], dataClusters: ALL_ACCOUNT_CLUSTERS },
        { resourceType: 'ACCOUNT', resourceId: accounts[0], dataClusters: ALL_ACCOUNT_CLUSTERS },
        { resourceType: 'CUSTOMER', resourceId: staff.orgId, dataClusters: ['CUSTOMER_CONTACT'] },
      ],
    });
    expect(res.body.createdTime).toMatch(RFC3339_MS);
    const persistent = await consentedToken(t.db, server, staff, { durationType: 'PERSISTENT', durationPeriod: undefined, ...everything }, [accounts[0]!]);
    const body = (await get(`/consents/${persistent.consent.id}`, persistent.token)).body;
    expect(body).not.toHaveProperty('durationPeriod');
    expect(body).toMatchObject({ durationType: 'PERSISTENT', lookbackPeriod: 365 });
  });

  it("is 404 for another recipient's consent, an unknown id and a malformed one alike, on all three operations", async () => {
    const ours = await consentedToken(t.db, server, staff, everything, [accounts[0]!]);
    const theirs = await fdxToken(server, await fdxClient(server), staff);
    for (const [id, token] of [[ours.consent.id, theirs], ['A'.repeat(22), ours.token], ['x', ours.token], ['not%20an%20id', ours.token], ['a'.repeat(300), ours.token]] as const) {
      expectFdxProblem(await get(`/consents/${id}`, token), 404, /No consent with this id/);
      expectFdxProblem(await get(`/consents/${id}/revocation`, token), 404, /No consent with this id/);
      expectFdxProblem(await revoke(id, token), 404, /No consent with this id/);
    }
    expect((await get(`/consents/${ours.consent.id}`, ours.token)).body.status).toBe('ACTIVE');
  });
});

describe('PUT /fdx/v6/consents/{consentId}/revocation', () => {
  it('refuses a body without both members, with another value, with more members, or not JSON: 400', async () => {
    const { token, consent } = await consentedToken(t.db, server, staff, everything, [accounts[0]!]);
    expectFdxProblem(await revoke(consent.id, token, { json: { initiator: 'INDIVIDUAL' } }), 400, /reason: must be one of BUSINESS_RULE, USER_ACTION/);
    expectFdxProblem(await revoke(consent.id, token, { json: { reason: 'USER_ACTION' } }), 400, /initiator: must be one of DATA_ACCESS_PLATFORM, DATA_PROVIDER, DATA_RECIPIENT, INDIVIDUAL, MERCHANT, VENDOR/);
    expectFdxProblem(await revoke(consent.id, token, { json: { reason: 'BORED', initiator: 'INDIVIDUAL' } }), 400, /reason: must be one of/);
    expectFdxProblem(await revoke(consent.id, token, { json: { reason: 'USER_ACTION', initiator: 'INDIVIDUAL', note: 'x' } }), 400, /unknown body parameter note/);
    expectFdxProblem(await revoke(consent.id, token, { rawJson: '{"reason": USER_ACTION' }), 400, /not valid JSON/);
    expectFdxProblem(await revoke(consent.id, token, { rawJson: '' }), 400, /reason: must be one of/);
    expect((await get(`/consents/${consent.id}`, token)).body.status).toBe('ACTIVE');
  });

  it('revokes: 204, the revocation listed, the consent REVOKED, its token 401 at the next data call; again is 409', async () => {
    const { token, client, consent } = await consentedToken(t.db, server, staff, everything, [accounts[0]!]);
    expect((await get(`/consents/${consent.id}/revocation`, token)).body).toEqual({ revocations: [] });
    const res = await revoke(consent.id, token, { json: { reason: 'BUSINESS_RULE', initiator: 'DATA_RECIPIENT' } });
    expect(res.status).toBe(204);
    expect(res.headers.get('content-type')).toBeNull();
    const data = await get('/accounts', token);
    expect(data.status).toBe(401);
    expect(data.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    // The recipient's next token (a new authorization of the same client) still reads the record.
    const next = await fdxToken(server, client, staff);
    const list = await get(`/consents/${consent.id}/revocation`, next);
    expect(list.body).toEqual({ revocations: [{ status: 'REVOKED', reason: 'BUSINESS_RULE', initiator: 'DATA_RECIPIENT', updatedTime: expect.stringMatching(RFC3339_MS) }] });
    const grant = (await get(`/consents/${consent.id}`, next)).body;
    expect(grant).toMatchObject({ status: 'REVOKED', updatedTime: (list.body.revocations as { updatedTime: string }[])[0]!.updatedTime });
    expectFdxProblem(await revoke(consent.id, next), 409, /already revoked/);
    const audit = await t.db.selectFrom('audit_events').select(['client_id', 'organization_id', 'details']).where('event', '=', 'fdx_consent.revoked').execute();
    expect(audit).toEqual([{ client_id: client.client_id, organization_id: staff.orgId, details: { consent_id: consent.id, grant_id: consent.grantId, reason: 'BUSINESS_RULE', initiator: 'DATA_RECIPIENT' } }]);
  });

  it('answers 409 for an expired consent too, saying so', async () => {
    const { client, consent } = await consentedToken(t.db, server, staff, everything, [accounts[0]!]);
    await sql`update fdx_consents set created_at = now() - interval '31 days', expires_at = now() - interval '1 second' where id = ${consent.id}`.execute(t.db);
    const other = await fdxToken(server, await fdxClient(server), staff);
    expectFdxProblem(await revoke(consent.id, other), 404, /No consent/);
    // The chores' sweep ends the expired consent's authorization; the same client's next token reads the record.
    expect(await expireDueConsents(t.db)).toBeGreaterThanOrEqual(1);
    const next = await fdxToken(server, client, staff);
    expect((await get(`/consents/${consent.id}`, next)).body.status).toBe('EXPIRED');
    expectFdxProblem(await revoke(consent.id, next), 409, /has expired/);
    expect((await get(`/consents/${consent.id}/revocation`, next)).body).toEqual({ revocations: [] });
  });
});

describe('the served /openapi.json', () => {
  it('documents the three Consent API operations with their schemas: a request body for the revocation, a 204 without content', async () => {
    const paths = (await apiGet(server, 'production', '/openapi.json')).body.paths as Record<string, Record<string, { operationId: string; requestBody?: { content: Record<string, { schema: { required?: string[]; additionalProperties?: unknown } }> }; responses: Record<string, { content?: Record<string, { schema: { properties?: Record<string, unknown> } }> }> }>>;
    expect(paths['/fdx/v6/consents/{consentId}']!.get!.operationId).toBe('getConsentGrant');
    expect(Object.keys(paths['/fdx/v6/consents/{consentId}']!.get!.responses['200']!.content!['application/json']!.schema.properties!)).toEqual(expect.arrayContaining(['id', 'status', 'parties', 'expirationTime', 'lookbackPeriod', 'resources']));
    const put = paths['/fdx/v6/consents/{consentId}/revocation']!.put!;
    expect(put.operationId).toBe('revokeConsentGrant');
    expect(put.requestBody!.content['application/json']!.schema).toMatchObject({ required: ['reason', 'initiator'], additionalProperties: false });
    expect(put.responses['204']).not.toHaveProperty('content');
    expect(Object.keys(put.responses)).toEqual(expect.arrayContaining(['204', '400', '404', '409']));
    expect(paths['/fdx/v6/consents/{consentId}/revocation']!.get!.operationId).toBe('getConsentRevocation');
  });
});
