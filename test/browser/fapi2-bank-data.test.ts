/**
 * A bank-data client end to end, as an aggregator would run one with a real relying-party
 * library (docs/bank-data.md): openid-client pushes an FDX consent request (PAR, private_key_jwt,
 * DPoP), the organization's admin signs in and picks one of two accounts in Chromium, and the
 * DPoP-bound tokens are held to that consent at the gateway until the nonprofit revokes it.
 * The browser has no network, so the client's redirect URI is never served: the callback is
 * read from the request the browser makes.
 */
import * as oauth from 'oauth4webapi';
import * as openid from 'openid-client';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { revokeFdxConsent } from '../../src/authorizations/fdx-consents.js';
import { signIn, useChromium } from '../helpers/chromium.js';
import { FAPI_REDIRECT, insecure, keyPair, registerFapiClient, type FapiClient } from '../helpers/fapi.js';
import { createAccount } from '../helpers/fdx.js';
import { endpoints } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const { server, staff } = useOAuthServer();
const chromium = useChromium();
const REDIRECT = FAPI_REDIRECT.production;

const CONSENT_REQUEST = [
  {
    type: 'fdx_v1.0',
    consentRequest: {
      durationType: 'TIME_BOUND',
      durationPeriod: 90,
      lookbackPeriod: 30,
      resources: [{ resourceType: 'ACCOUNT', dataClusters: ['ACCOUNT_DETAILED', 'TRANSACTIONS'] }],
    },
  },
];

let fapi: FapiClient;
let config: openid.Configuration;
let dpop: openid.DPoPHandle;
let dpopKey: Awaited<ReturnType<typeof keyPair>>;
let chosen: { id: string; accountNumber: string };
let other: { id: string; accountNumber: string };

/** What the flow hands from one step to the next, in the order the tests run. */
const flow = {} as {
  verifier: string;
  state: string;
  nonce: string;
  callback: URL;
  tokens: Awaited<ReturnType<typeof openid.authorizationCodeGrant>>;
  consentId: string;
  refreshToken: string;
};

beforeAll(async () => {
  fapi = await registerFapiClient(server);
  chosen = await createAccount(server.db, staff, 'production', { accountNumber: '9000001111' });
  other = await createAccount(server.db, staff, 'production', { accountNumber: '9000002222' });
  // The relying party: discovery, its ES256 signing key for private_key_jwt, ES256 ID tokens,
  // and a DPoP key of its own (plain http only because the test runs on loopback).
  config = await openid.discovery(
    new URL(endpoints(server, 'production').api),
    fapi.client_id,
    { id_token_signed_response_alg: 'ES256' },
    openid.PrivateKeyJwt(fapi.signingKey.privateKey),
    {
      execute: [openid.allowInsecureRequests],
    },
  );
  dpopKey = await keyPair('ES256');
  dpop = openid.getDPoPHandle(config, dpopKey);
});

/** Resolves with the first request the browser makes to the redirect URI (never served). */
function callbackOf(page: Page): Promise<URL> {
  return page
    .waitForRequest((request) => request.url().startsWith(`${REDIRECT}?`), { timeout: 15_000 })
    .then((request) => new URL(request.url()));
}

const fdx = (path: string) => new URL(`${server.urls.api}/fdx/v6${path}`);
const fdxGet = (path: string) =>
  openid.fetchProtectedResource(config, flow.tokens.access_token, fdx(path), 'GET', null, new Headers(), { DPoP: dpop });

describe('a fapi2 client with openid-client and Chromium: an FDX consent from the push to its revocation', () => {
  it('pushes the request with authorization_details; the admin signs in, sees what is asked and both accounts, ticks one and approves; the browser returns to the redirect URI with code, state and iss', async () => {
    flow.verifier = openid.randomPKCECodeVerifier();
    flow.state = openid.randomState();
    flow.nonce = openid.randomNonce();
    const url = await openid.buildAuthorizationUrlWithPAR(
      config,
      {
        redirect_uri: REDIRECT,
        scope: 'openid offline_access read_only read:bank_accounts',
        code_challenge: await openid.calculatePKCECodeChallenge(flow.verifier),
        code_challenge_method: 'S256',
        state: flow.state,
        nonce: flow.nonce,
        authorization_details: JSON.stringify(CONSENT_REQUEST),
      },
      { DPoP: dpop },
    );
    // Only the pushed request's reference goes through the browser.
    expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
    expect(url.href.startsWith(`${endpoints(server, 'production').authorize}?`)).toBe(true);

    const page = await chromium.context.newPage();
    await page.goto(url.href);
    // Signs in and passes any second factor the approval asks for (the helper other browser tests use).
    await signIn(page, staff.users.admin);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toMatch(/^Aggregator wants access to /);

    const clusters = page.locator('ul.fdx-clusters');
    await expect(clusters.textContent()).resolves.toContain('Account details and balances; Transactions');
    await expect(page.locator('#fdx-terms').textContent()).resolves.toMatch(/Shared for 90 days, going back 30 days\./);
    const accounts = page.locator('#fdx-accounts');
    await expect(accounts.getByRole('checkbox').count()).resolves.toBe(2);
    const chosenBox = accounts.getByRole('checkbox', { name: /••••1111/ });
    const otherBox = accounts.getByRole('checkbox', { name: /••••2222/ });
    await expect(chosenBox.getAttribute('name')).resolves.toBe(`account_${chosen.id}`);
    await expect(otherBox.getAttribute('name')).resolves.toBe(`account_${other.id}`);

    await chosenBox.check();
    const callback = callbackOf(page);
    await page.getByRole('button', { name: 'Approve' }).click();
    flow.callback = await callback;
    expect(flow.callback.searchParams.get('state')).toBe(flow.state);
    expect(flow.callback.searchParams.get('iss')).toBe(config.serverMetadata().issuer);
    expect(flow.callback.searchParams.get('code')).toBeTruthy();
  });

  it('the code exchanges with DPoP for DPoP-bound tokens naming the consent, with an ES256 ID token openid-client validated', async () => {
    flow.tokens = await openid.authorizationCodeGrant(
      config,
      flow.callback,
      { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce, idTokenExpected: true },
      undefined,
      { DPoP: dpop },
    );
    // oauth4webapi (under openid-client) reports the scheme in lower case.
    expect(flow.tokens.token_type).toBe('dpop');
    expect(flow.tokens.refresh_token).toBeTruthy();
    flow.refreshToken = flow.tokens.refresh_token!;

    const details = flow.tokens.authorization_details as { type: string; consentId?: string }[];
    expect(details).toHaveLength(1);
    expect(details[0]!.type).toBe('fdx_v1.0');
    expect(details[0]!.consentId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    flow.consentId = details[0]!.consentId!;

    const [header] = flow.tokens.id_token!.split('.');
    expect(JSON.parse(Buffer.from(header!, 'base64url').toString()).alg).toBe('ES256');
    expect(flow.tokens.claims()).toMatchObject({ iss: config.serverMetadata().issuer, aud: fapi.client_id, nonce: flow.nonce });
  });

  it('the accounts list (fetchProtectedResource with DPoP) shows only the chosen account', async () => {
    const response = await fdxGet('/accounts');
    expect(response.status).toBe(200);
    const body = (await response.json()) as { accounts: { accountId: string }[] };
    expect(body.accounts.map((a) => a.accountId)).toEqual([chosen.id]);
    expect((await fdxGet(`/accounts/${chosen.id}`)).status).toBe(200);
  });

  it('the account not ticked is 404, as if it did not exist', async () => {
    expect((await fdxGet(`/accounts/${other.id}`)).status).toBe(404);
  });

  it('a data cluster the consent does not cover (statements) is 403 with FDX code 602', async () => {
    const response = await fdxGet(`/accounts/${chosen.id}/statements`);
    expect(response.status).toBe(403);
    expect(((await response.json()) as { code: number }).code).toBe(602);
  });

  it('the same DPoP-bound token works from oauth4webapi too (protectedResourceRequest with a proof from the bound key)', async () => {
    const handle = oauth.DPoP(fapi.client, dpopKey);
    const response = await oauth.protectedResourceRequest(
      flow.tokens.access_token,
      'GET',
      fdx(`/accounts/${chosen.id}/transactions`),
      new Headers(),
      null,
      { DPoP: handle, ...insecure },
    );
    expect(response.status).toBe(200);
    expect((await response.json()) as Record<string, unknown>).toHaveProperty('transactions');
  });

  it('refreshing with DPoP works twice, and the refresh token stays the same (not rotated)', async () => {
    // Both rounds send the original refresh token: had the first rotated it, the second would be refused.
    for (let round = 0; round < 2; round += 1) {
      const refreshed = await openid.refreshTokenGrant(config, flow.refreshToken, undefined, { DPoP: dpop });
      expect(refreshed.token_type).toBe('dpop');
      expect(refreshed.access_token).not.toBe(flow.tokens.access_token);
      expect(refreshed.refresh_token ?? flow.refreshToken).toBe(flow.refreshToken);
    }
  });

  it('once the nonprofit revokes the consent, the next FDX call with the same access token is 401 and the refresh is refused with invalid_grant', async () => {
    // The access token of the code exchange is still good before the revocation.
    expect((await fdxGet('/accounts')).status).toBe(200);
    const outcome = await revokeFdxConsent(server.db, {
      environment: 'production',
      consentId: flow.consentId,
      owner: { organizationId: staff.orgId },
      reason: 'USER_ACTION',
      initiator: 'DATA_PROVIDER',
    });
    expect(outcome).toBe('revoked');

    // openid-client answers a 401 with a challenge by throwing it: the token is no longer good.
    const challenged = await fdxGet('/accounts').catch((error: unknown) => error);
    expect(challenged).toBeInstanceOf(openid.WWWAuthenticateChallengeError);
    expect((challenged as openid.WWWAuthenticateChallengeError).status).toBe(401);
    expect((challenged as openid.WWWAuthenticateChallengeError).cause[0]).toMatchObject({
      scheme: 'dpop',
      parameters: { error: 'invalid_token' },
    });
    const refused = await openid.refreshTokenGrant(config, flow.refreshToken, undefined, { DPoP: dpop }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(openid.ResponseBodyError);
    expect((refused as openid.ResponseBodyError).error).toBe('invalid_grant');
  });
});
