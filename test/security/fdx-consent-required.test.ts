import { beforeAll, describe, expect, it } from 'vitest';
import { ASSERTION_TYPE, clientAssertion, FAPI_REDIRECT, registerFapiClient, type FapiClient } from '../helpers/fapi.js';
import { createAccount } from '../helpers/fdx.js';
import { dpopCall, fapiConsent } from '../helpers/fdx-consent.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { missingConsentRequest } from '../../src/oidc/interactions/fdx-consent-step.js';

/**
 * A bank-data (fapi2) client cannot skip the FDX consent (docs/bank-data.md, "Consents"): asking
 * for an FDX scope without an `fdx_v1.0` authorization detail is refused at the push, and the
 * gateway serves FDX data to a fapi2 client's token only under a live consent, whatever the token.
 */
const { testDatabase: t, server, staff } = useOAuthServer();

let fapi: FapiClient;
let syncing: FapiClient;
let account: { id: string };

beforeAll(async () => {
  fapi = await registerFapiClient(server);
  syncing = await registerFapiClient(server, { scopes: ['openid', 'offline_access', 'read_only', 'sync:connected_accounts'] });
  account = await createAccount(server.db, staff, 'production');
});

/** A push as an attacker sends it: by hand, with a valid client assertion, PKCE and no authorization_details. */
async function pushWithout(client: FapiClient, scope: string) {
  const response = await fetch(client.as.pushed_authorization_request_endpoint!, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: FAPI_REDIRECT.production,
      response_type: 'code',
      scope,
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      client_assertion_type: ASSERTION_TYPE,
      client_assertion: await clientAssertion(client, client.signingKey),
    }),
  });
  return { status: response.status, body: (await response.json()) as { error?: string; error_description?: string; request_uri?: string } };
}

describe('a fapi2 client asking for bank data without a consent request', () => {
  it.each([
    ['read:bank_accounts', () => fapi, 'openid offline_access read_only read:bank_accounts'],
    ['sync:connected_accounts', () => syncing, 'openid offline_access read_only sync:connected_accounts'],
  ])('is refused at the push (%s): invalid_request, saying what is missing', async (_scope, client, scope) => {
    const { status, body } = await pushWithout(client(), scope);
    expect(status).toBe(400);
    expect(body.request_uri).toBeUndefined();
    expect(body.error).toBe('invalid_request');
    expect(body.error_description).toMatch(/authorization_details/);
    expect(body.error_description).toMatch(/fdx_v1\.0/);
  });

  it('a push without an FDX scope needs no consent request (openid alone)', async () => {
    const { status, body } = await pushWithout(fapi, 'openid offline_access');
    expect(status, JSON.stringify(body)).toBe(201);
  });
});

describe('the gateway and a fapi2 token without a live consent', () => {
  it('serves FDX data under the consent, and refuses it (403, FDX 602) once the token has none', async () => {
    const { tokens, consentId } = await fapiConsent(
      server,
      staff,
      fapi,
      { resources: [{ resourceType: 'ACCOUNT', dataClusters: ['ACCOUNT_DETAILED', 'TRANSACTIONS'] }] },
      [account.id],
    );
    expect((await dpopCall(server, fapi, tokens.access_token, 'GET', '/fdx/v6/accounts')).status).toBe(200);
    // A token whose authorization holds no consent record (one issued before this rule, or
    // whose record went missing): it must not fall back to "every account, no lookback".
    await t.db.deleteFrom('fdx_consents').where('id', '=', consentId).execute();
    for (const path of ['/fdx/v6/accounts', `/fdx/v6/accounts/${account.id}/transactions`, '/fdx/v6/customers/current']) {
      const refused = await dpopCall(server, fapi, tokens.access_token, 'GET', path);
      expect(refused.status, path).toBe(403);
      expect(refused.body.code, path).toBe(602);
      expect(String(refused.body.detail), path).toMatch(/no FDX consent/);
    }
  });
});

describe('the consent screen holds the rule too (a request pushed before it)', () => {
  const step = { request: {}, words: {}, accounts: [], asksForAccounts: false } as unknown as Parameters<typeof missingConsentRequest>[2];
  it('cannot approve bank data for a fapi2 client without a consent request', () => {
    expect(missingConsentRequest(true, ['openid', 'read_only', 'read:bank_accounts'], undefined)).toMatch(/cannot be approved/);
    expect(missingConsentRequest(true, ['read_only', 'sync:connected_accounts'], undefined)).toMatch(/cannot be approved/);
  });
  it('leaves a consent request, a request without bank data and a standard client alone', () => {
    expect(missingConsentRequest(true, ['read_only', 'read:bank_accounts'], step)).toBeUndefined();
    expect(missingConsentRequest(true, ['openid', 'read_only'], undefined)).toBeUndefined();
    expect(missingConsentRequest(false, ['read_only', 'read:bank_accounts'], undefined)).toBeUndefined();
  });
});
