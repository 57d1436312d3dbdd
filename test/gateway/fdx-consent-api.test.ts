import { sql } from 'kysely';
import * as oauth from 'oauth4webapi';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { expireDueConsents, findConsentOfRecipient } from '../../src/authorizations/fdx-consents.js';
import { apiGet, type ApiResponse } from '../helpers/gateway.js';
import { fdxClient, fdxToken, seedBank } from '../helpers/fdx.js';
import { ALL_ACCOUNT_CLUSTERS, dpopCall, fapiConsent, recipientToken } from '../helpers/fdx-consent.js';
import { insecure, registerFapiClient, type FapiClient } from '../helpers/fapi.js';
import { basic, endpoints } from '../helpers/flow.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * The FDX 6.3 Consent API (docs/api.md, "FDX bank-data API", Consent API; docs/bank-data.md): the
 * data recipient calls it with its own client-credentials token (private_key_jwt, DPoP-bound),
 * and sees only the consents granted to it.
 */
const { testDatabase: t, server, staff } = useOAuthServer();
let accounts: string[];
let recipient: FapiClient;
let own: string;

beforeAll(async () => {
  accounts = (await seedBank(t.db, staff, 'production', { accounts: 2, transactionsPerAccount: 2 })).account_ids;
  recipient = await registerFapiClient(server);
  own = await recipientToken(recipient);
});

const everything = {
  resources: [
    { resourceType: 'ACCOUNT', dataClusters: ALL_ACCOUNT_CLUSTERS },
    { resourceType: 'CUSTOMER', dataClusters: ['CUSTOMER_CONTACT'] },
  ],
};
const get = (path: string, fapi = recipient, token = own) => dpopCall(server, fapi, token, 'GET', `/fdx/v6${path}`);
const revoke = (
  id: string,
  body: { json?: unknown; rawJson?: string } = { json: { reason: 'USER_ACTION', initiator: 'INDIVIDUAL' } },
  fapi = recipient,
  token = own,
) => dpopCall(server, fapi, token, 'PUT', `/fdx/v6/consents/${id}/revocation`, body);
const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const consent = (request: Record<string, unknown>, chosen: string[], fapi = recipient) =>
  fapiConsent(server, staff, fapi, { ...everything, ...request }, chosen);

function expectFdxProblem(res: ApiResponse, status: number, detail: RegExp) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code: status, detail: expect.stringMatching(detail) });
}

describe('the recipient’s own token', () => {
  it('comes from client_credentials with private_key_jwt, DPoP-bound, with no scope', async () => {
    const response = await oauth.clientCredentialsGrantRequest(
      recipient.as,
      recipient.client,
      recipient.auth,
      {},
      { DPoP: recipient.dpop, ...insecure },
    );
    const body = await oauth.processClientCredentialsResponse(recipient.as, recipient.client, response);
    expect(body.token_type).toBe('dpop');
    expect(body.scope ?? '').toBe('');
    const scoped = await oauth.clientCredentialsGrantRequest(
      recipient.as,
      recipient.client,
      recipient.auth,
      { scope: 'read_only' },
      { DPoP: recipient.dpop, ...insecure },
    );
    expect(scoped.status).toBe(400);
    expect(((await scoped.json()) as { error: string }).error).toBe('invalid_scope');
  });

  it('is not for standard clients', async () => {
    const standard = await fdxClient(server);
    const response = await fetch(endpoints(server, 'production').token, {
      method: 'POST',
      headers: { authorization: basic(standard.client_id, standard.client_secret), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'unauthorized_client' });
  });

  it('is the only credential the Consent API takes: a user’s access token of the consent, or a Bearer token, is 401; the own token does not reach the data', async () => {
    const { tokens, consentId } = await consent({}, [accounts[0]!]);
    expect((await get(`/consents/${consentId}`, recipient, tokens.access_token)).status).toBe(401);
    const bearer = await fdxToken(server, await fdxClient(server), staff);
    expect((await apiGet(server, 'production', `/fdx/v6/consents/${consentId}`, { bearer })).status).toBe(401);
    expect((await get('/accounts')).status).toBe(401);
    expect((await get(`/consents/${consentId}`)).status).toBe(200);
  });
});

describe('GET /fdx/v6/consents/{consentId}', () => {
  it('gives its recipient the ConsentGrant: parties, times, duration, lookback and what was granted', async () => {
    const { consentId } = await consent({ lookbackPeriod: 90 }, [accounts[1]!, accounts[0]!]);
    const stored = (await findConsentOfRecipient(t.db, 'production', recipient.client_id, consentId))!;
    const organization = await t.db.selectFrom('organizations').select('name').where('id', '=', staff.orgId).executeTakeFirstOrThrow();
    const res = await get(`/consents/${consentId}`);
    expect(res.status).toBe(200);
    expect(stored.updatedAt.getTime()).toBeGreaterThanOrEqual(stored.createdAt.getTime());
    expect(res.body).toEqual({
      id: consentId,
      status: 'ACTIVE',
      parties: [
        { name: 'Aggregator', type: 'DATA_RECIPIENT' },
        { name: organization.name, type: 'DATA_PROVIDER' },
      ],
      createdTime: stored.createdAt.toISOString(),
      // Updated when its code was exchanged (it became ACTIVE then).
      updatedTime: stored.updatedAt.toISOString(),
      expirationTime: new Date(stored.createdAt.getTime() + 30 * 86_400_000).toISOString(),
      durationType: 'TIME_BOUND',
      durationPeriod: 30,
      lookbackPeriod: 90,
      resources: expect.arrayContaining([
        { resourceType: 'ACCOUNT', resourceId: accounts[1], dataClusters: ALL_ACCOUNT_CLUSTERS },
        { resourceType: 'ACCOUNT', resourceId: accounts[0], dataClusters: ALL_ACCOUNT_CLUSTERS },
        { resourceType: 'CUSTOMER', resourceId: staff.orgId, dataClusters: ['CUSTOMER_CONTACT'] },
      ]),
    });
    expect(res.body.createdTime).toMatch(RFC3339_MS);
    const persistent = await consent({ durationType: 'PERSISTENT', durationPeriod: undefined }, [accounts[0]!]);
    const body = (await get(`/consents/${persistent.consentId}`)).body;
    expect(body).not.toHaveProperty('durationPeriod');
    expect(body).toMatchObject({ durationType: 'PERSISTENT', lookbackPeriod: 365 });
  });

  it("is 404 for another recipient's consent, an unknown id and a malformed one alike, on all three operations", async () => {
    const ours = await consent({}, [accounts[0]!]);
    const other = await registerFapiClient(server);
    const theirs = await recipientToken(other);
    for (const [id, fapi, token] of [
      [ours.consentId, other, theirs],
      ['A'.repeat(22), recipient, own],
      ['x', recipient, own],
      ['not%20an%20id', recipient, own],
      ['a'.repeat(300), recipient, own],
    ] as const) {
      expectFdxProblem(await get(`/consents/${id}`, fapi, token), 404, /No consent with this id/);
      expectFdxProblem(await get(`/consents/${id}/revocation`, fapi, token), 404, /No consent with this id/);
      expectFdxProblem(await revoke(id, undefined, fapi, token), 404, /No consent with this id/);
    }
    expect((await get(`/consents/${ours.consentId}`)).body.status).toBe('ACTIVE');
  });
});

describe('PUT /fdx/v6/consents/{consentId}/revocation', () => {
  it('refuses a body without both members, with another value, with more members, or not JSON: 400', async () => {
    const { consentId } = await consent({}, [accounts[0]!]);
    expectFdxProblem(
      await revoke(consentId, { json: { initiator: 'INDIVIDUAL' } }),
      400,
      /reason: must be one of BUSINESS_RULE, USER_ACTION/,
    );
    expectFdxProblem(
      await revoke(consentId, { json: { reason: 'USER_ACTION' } }),
      400,
      /initiator: must be one of DATA_ACCESS_PLATFORM, DATA_PROVIDER, DATA_RECIPIENT, INDIVIDUAL, MERCHANT, VENDOR/,
    );
    expectFdxProblem(await revoke(consentId, { json: { reason: 'BORED', initiator: 'INDIVIDUAL' } }), 400, /reason: must be one of/);
    expectFdxProblem(
      await revoke(consentId, { json: { reason: 'USER_ACTION', initiator: 'INDIVIDUAL', note: 'x' } }),
      400,
      /unknown body parameter note/,
    );
    expectFdxProblem(await revoke(consentId, { rawJson: '{"reason": USER_ACTION' }), 400, /not valid JSON/);
    expectFdxProblem(await revoke(consentId, { rawJson: '' }), 400, /reason: must be one of/);
    expect((await get(`/consents/${consentId}`)).body.status).toBe('ACTIVE');
  });

  it('revokes: 204, the revocation listed, the consent REVOKED, its access token 401 at the next data call and its refresh refused; again is 409', async () => {
    const { tokens, consentId } = await consent({}, [accounts[0]!]);
    expect((await get(`/consents/${consentId}/revocation`)).body).toEqual({ revocations: [] });
    expect((await get('/accounts', recipient, tokens.access_token)).status).toBe(200);
    const res = await revoke(consentId, { json: { reason: 'BUSINESS_RULE', initiator: 'DATA_RECIPIENT' } });
    expect(res.status).toBe(204);
    expect(res.headers.get('content-type')).toBeNull();
    const data = await get('/accounts', recipient, tokens.access_token);
    expect(data.status).toBe(401);
    expect(data.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    const refresh = await oauth.refreshTokenGrantRequest(recipient.as, recipient.client, recipient.auth, tokens.refresh_token!, {
      DPoP: recipient.dpop,
      ...insecure,
    });
    expect(refresh.status).toBe(400);
    const introspected = await oauth.processIntrospectionResponse(
      recipient.as,
      recipient.client,
      await oauth.introspectionRequest(recipient.as, recipient.client, recipient.auth, tokens.access_token, insecure),
    );
    expect(introspected).toEqual({ active: false });
    const list = await get(`/consents/${consentId}/revocation`);
    expect(list.body).toEqual({
      revocations: [
        { status: 'REVOKED', reason: 'BUSINESS_RULE', initiator: 'DATA_RECIPIENT', updatedTime: expect.stringMatching(RFC3339_MS) },
      ],
    });
    expect((await get(`/consents/${consentId}`)).body).toMatchObject({
      status: 'REVOKED',
      updatedTime: (list.body.revocations as { updatedTime: string }[])[0]!.updatedTime,
    });
    expectFdxProblem(await revoke(consentId), 409, /already revoked/);
    const audit = await t.db
      .selectFrom('audit_events')
      .select(['client_id', 'organization_id', 'details'])
      .where('event', '=', 'fdx_consent.revoked')
      .where(sql<boolean>`details->>'consent_id' = ${consentId}`)
      .execute();
    expect(audit).toEqual([
      {
        client_id: recipient.client_id,
        organization_id: staff.orgId,
        details: expect.objectContaining({ consent_id: consentId, reason: 'BUSINESS_RULE', initiator: 'DATA_RECIPIENT' }),
      },
    ]);
    // The organization's audit log names the recipient as who revoked it: no person was signed in.
    const session = await dashboardSession(server, 'production', staff.users.owner);
    const log = await session.get(`/orgs/${staff.ein}/audit?event=fdx_consent.revoked`);
    const row = log.html.split('<tr>').find((r) => r.includes(consentId))!;
    expect(row).toContain('<td>Aggregator<span class="sub">the application itself</span>');
    expect(row).not.toContain('the maker (admin CLI) or the system');
  });

  it('answers 409 for an expired consent, saying so; the sweep marks it EXPIRED and its token stops', async () => {
    const { tokens, consentId } = await consent({ durationType: 'ONE_TIME', durationPeriod: undefined }, [accounts[0]!]);
    const introspect = async () =>
      oauth.processIntrospectionResponse(
        recipient.as,
        recipient.client,
        await oauth.introspectionRequest(recipient.as, recipient.client, recipient.auth, tokens.access_token, insecure),
      );
    expect((await introspect()).fdxConsentId).toBe(consentId);
    // An hour on (a ONE_TIME consent's life): its token and introspection stop at once, sweep or not.
    vi.useFakeTimers({ now: Date.now() + 3_601_000, toFake: ['Date'] });
    try {
      expect((await get('/accounts', recipient, tokens.access_token)).status).toBe(401);
      expect(await introspect()).toEqual({ active: false });
    } finally {
      vi.useRealTimers();
    }
    await sql`update fdx_consents set created_at = now() - interval '31 days', expires_at = now() - interval '1 second' where id = ${consentId}`.execute(
      t.db,
    );
    expect(await expireDueConsents(t.db)).toBeGreaterThanOrEqual(1);
    expect((await get(`/consents/${consentId}`)).body.status).toBe('EXPIRED');
    expectFdxProblem(await revoke(consentId), 409, /has expired/);
    expect((await get(`/consents/${consentId}/revocation`)).body).toEqual({ revocations: [] });
  });
});

describe('the served /openapi.json', () => {
  it('documents the three Consent API operations with their schemas and the client-credentials security scheme', async () => {
    const doc = (await apiGet(server, 'production', '/openapi.json')).body as {
      paths: Record<
        string,
        Record<
          string,
          {
            operationId: string;
            security: unknown;
            requestBody?: { content: Record<string, { schema: { required?: string[]; additionalProperties?: unknown } }> };
            responses: Record<string, { content?: Record<string, { schema: { properties?: Record<string, unknown> } }> }>;
          }
        >
      >;
      components: { securitySchemes: Record<string, unknown> };
    };
    const paths = doc.paths;
    expect(paths['/fdx/v6/consents/{consentId}']!.get!.operationId).toBe('getConsentGrant');
    expect(paths['/fdx/v6/consents/{consentId}']!.get!.security).toEqual([{ clientToken: [] }]);
    expect(doc.components.securitySchemes.clientToken).toMatchObject({
      type: 'oauth2',
      flows: { clientCredentials: { tokenUrl: expect.stringMatching(/\/auth\/oauth\/token$/) } },
    });
    expect(
      Object.keys(paths['/fdx/v6/consents/{consentId}']!.get!.responses['200']!.content!['application/json']!.schema.properties!),
    ).toEqual(expect.arrayContaining(['id', 'status', 'parties', 'expirationTime', 'lookbackPeriod', 'resources']));
    const put = paths['/fdx/v6/consents/{consentId}/revocation']!.put!;
    expect(put.operationId).toBe('revokeConsentGrant');
    expect(put.requestBody!.content['application/json']!.schema).toMatchObject({
      required: ['reason', 'initiator'],
      additionalProperties: false,
    });
    expect(put.responses['204']).not.toHaveProperty('content');
    expect(Object.keys(put.responses)).toEqual(expect.arrayContaining(['204', '400', '404', '409']));
    expect(paths['/fdx/v6/consents/{consentId}/revocation']!.get!.operationId).toBe('getConsentRevocation');
  });
});
