import * as oauth from 'oauth4webapi';
import { beforeAll, describe, expect, it } from 'vitest';
import { approve, exchange, insecure, push, registerFapiClient, type FapiClient } from '../helpers/fapi.js';
import { createAccount } from '../helpers/fdx.js';
import { authorizationRequest } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { hashId } from '../../src/db/provider-store.js';

/**
 * An FDX consent request from the push to the data (docs/bank-data.md, "Consents"): the screen
 * says what is shared and lets the approver pick accounts, the tokens name the consent, and
 * every call is held to it.
 */
const { server, staff } = useOAuthServer();

let fapi: FapiClient;
let accounts: { id: string }[];

const consentRequest = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify([
    {
      type: 'fdx_v1.0',
      consentRequest: {
        durationType: 'TIME_BOUND',
        durationPeriod: 90,
        lookbackPeriod: 30,
        resources: [{ resourceType: 'ACCOUNT', dataClusters: ['ACCOUNT_DETAILED', 'TRANSACTIONS'] }],
        ...overrides,
      },
    },
  ]);

beforeAll(async () => {
  fapi = await registerFapiClient(server);
  accounts = [await createAccount(server.db, staff, 'production'), await createAccount(server.db, staff, 'production')];
});

async function dpopGet(token: string, path: string) {
  const response = await oauth.protectedResourceRequest(token, 'GET', new URL(`${server.urls.api}${path}`), new Headers(), null, {
    DPoP: fapi.dpop,
    ...insecure,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('an FDX consent, pushed, chosen and enforced', () => {
  let consentHtml = '';
  let tokens: oauth.TokenEndpointResponse;

  beforeAll(async () => {
    const { requestUri, verifier, state } = await push(fapi, { authorization_details: consentRequest() });
    const callback = await approve(server, fapi, requestUri, {
      login: staff.users.admin,
      consentFields: (html) => {
        consentHtml = html;
        return { [`account_${accounts[0]!.id}`]: 'on' };
      },
    });
    tokens = await exchange(fapi, callback, state, verifier);
  });

  it('the consent screen says what, for how long, how far back, and offers the accounts', () => {
    expect(consentHtml).toContain('Account details and balances; Transactions');
    expect(consentHtml).toContain('for 90 days');
    expect(consentHtml).toContain('going back 30 days');
    for (const account of accounts) expect(consentHtml).toContain(`name="account_${account.id}"`);
  });

  it('the token response names the consent in authorization_details, and introspection as fdxConsentId', async () => {
    const details = tokens.authorization_details as { type: string; consentId: string }[];
    expect(details).toHaveLength(1);
    expect(details[0]!.type).toBe('fdx_v1.0');
    expect(details[0]!.consentId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const response = await oauth.introspectionRequest(fapi.as, fapi.client, fapi.auth, tokens.access_token, insecure);
    const introspection = await oauth.processIntrospectionResponse(fapi.as, fapi.client, response);
    expect(introspection.active).toBe(true);
    expect(introspection.fdxConsentId).toBe(details[0]!.consentId);
  });

  it('only the chosen account is there; the other is 404 as if absent', async () => {
    const list = await dpopGet(tokens.access_token, '/fdx/v6/accounts');
    expect(list.status).toBe(200);
    expect((list.body.accounts as { accountId: string }[]).map((a) => a.accountId)).toEqual([accounts[0]!.id]);
    expect((await dpopGet(tokens.access_token, `/fdx/v6/accounts/${accounts[1]!.id}`)).status).toBe(404);
    expect((await dpopGet(tokens.access_token, `/fdx/v6/accounts/${accounts[0]!.id}`)).status).toBe(200);
  });

  it('a cluster outside the consent is 403 with an FDX body', async () => {
    const statements = await dpopGet(tokens.access_token, `/fdx/v6/accounts/${accounts[0]!.id}/statements`);
    expect(statements.status).toBe(403);
    expect(statements.body.code).toBe(602);
  });
});

describe('choosing accounts', () => {
  it('approving with no account ticked shows the screen again, saying why, and issues nothing', async () => {
    const { requestUri } = await push(fapi, { authorization_details: consentRequest() });
    let shown = 0;
    const attempt = approve(server, fapi, requestUri, {
      login: staff.users.admin,
      consentFields: () => {
        shown += 1;
        // The second time, tick one: the flow then completes.
        return shown === 1 ? {} : { [`account_${accounts[1]!.id}`]: 'on' };
      },
    });
    const callback = await attempt;
    expect(shown).toBe(2);
    expect(callback.searchParams.get('code')).toBeTruthy();
  });

  it("a refresh token's expiry never passes the end of its consent", async () => {
    const { requestUri, verifier, state } = await push(fapi, { authorization_details: consentRequest({ durationPeriod: 10 }) });
    const callback = await approve(server, fapi, requestUri, {
      login: staff.users.admin,
      consentFields: () => ({ [`account_${accounts[0]!.id}`]: 'on' }),
    });
    const tokens = await exchange(fapi, callback, state, verifier);
    const daysLeft = async () => {
      const row = await server.db
        .selectFrom('oidc_models')
        .select('expires_at')
        .where('model', '=', 'RefreshToken')
        .where('id', '=', hashId(tokens.refresh_token!))
        .executeTakeFirstOrThrow();
      return (row.expires_at!.getTime() - Date.now()) / 86_400_000;
    };
    // Issued so (not 31 days), and so after a use.
    for (const when of ['issued', 'refreshed']) {
      if (when === 'refreshed')
        await oauth.processRefreshTokenResponse(
          fapi.as,
          fapi.client,
          await oauth.refreshTokenGrantRequest(fapi.as, fapi.client, fapi.auth, tokens.refresh_token!, { DPoP: fapi.dpop, ...insecure }),
        );
      const days = await daysLeft();
      expect(days, when).toBeGreaterThan(9.9);
      expect(days, when).toBeLessThanOrEqual(10);
    }
    // The token response names the consent, and says nothing of its internal end.
    expect(Object.keys((tokens.authorization_details as unknown as Record<string, unknown>[])[0]!).sort()).toEqual([
      'consentId',
      'consentRequest',
      'type',
    ]);
  });

  it('a ONE_TIME consent gets no refresh token', async () => {
    const { requestUri, verifier, state } = await push(fapi, {
      authorization_details: consentRequest({ durationType: 'ONE_TIME', durationPeriod: undefined }),
    });
    const callback = await approve(server, fapi, requestUri, {
      login: staff.users.admin,
      consentFields: () => ({ [`account_${accounts[0]!.id}`]: 'on' }),
    });
    const tokens = await exchange(fapi, callback, state, verifier);
    expect(tokens.refresh_token).toBeUndefined();
  });
});

describe('authorization_details from a standard client', () => {
  it('is refused: FDX consents are for bank-data (fapi2) clients', async () => {
    const standard = await server.registerClient({ environment: 'production', scopes: ['read_only', 'read:bank_accounts'] });
    const { url } = await authorizationRequest(server, {
      environment: 'production',
      clientId: standard.client_id,
      redirectUri: 'https://app.example.org/callback',
      scope: 'read_only read:bank_accounts',
      extraParams: { authorization_details: consentRequest() },
    });
    const response = await fetch(url, { redirect: 'manual' });
    const location = new URL(response.headers.get('location')!, url);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toMatch(/fapi2/);
  });
});

describe('malformed authorization_details are refused at the push, never a 500', () => {
  it.each([
    ['not JSON', '{'],
    ['not a list', JSON.stringify({ type: 'fdx_v1.0' })],
    ['another type', JSON.stringify([{ type: 'payment_initiation' }])],
    [
      'two details',
      JSON.stringify([
        {
          type: 'fdx_v1.0',
          consentRequest: { durationType: 'PERSISTENT', resources: [{ resourceType: 'ACCOUNT', dataClusters: ['TRANSACTIONS'] }] },
        },
        {
          type: 'fdx_v1.0',
          consentRequest: { durationType: 'PERSISTENT', resources: [{ resourceType: 'ACCOUNT', dataClusters: ['TRANSACTIONS'] }] },
        },
      ]),
    ],
    ['a duration over a year', consentRequest({ durationPeriod: 400 })],
    ['an unknown cluster', consentRequest({ resources: [{ resourceType: 'ACCOUNT', dataClusters: ['BILLS'] }] })],
    ['no resources', consentRequest({ resources: [] })],
  ])('%s', async (_what, value) => {
    const error = await push(fapi, { authorization_details: value }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(oauth.ResponseBodyError);
    expect((error as oauth.ResponseBodyError).status).toBe(400);
    expect((error as oauth.ResponseBodyError).error).toBe('invalid_authorization_details');
  });
});
