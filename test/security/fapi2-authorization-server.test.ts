import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  approve,
  ASSERTION_TYPE,
  clientAssertion,
  DEFAULT_CONSENT_REQUEST,
  exchange,
  FAPI_REDIRECT,
  insecure,
  keyPair,
  push,
  registerFapiClient,
  type FapiClient,
} from '../helpers/fapi.js';
import { dpopProof } from '../helpers/dpop-proof.js';
import { basic, endpoints } from '../helpers/flow.js';
import { createAccount } from '../helpers/fdx.js';
import { startOAuthServer, type OAuthTestServer } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { statusAtHost } from '../helpers/at-host.js';
import { hashId, setModelExpiry } from '../../src/db/provider-store.js';

/**
 * The FAPI 2.0 Security Profile at the authorization server, held per fapi2 client
 * (docs/bank-data.md): each refusal a real request, as an attacker or a careless client sends it.
 */
const {
  testDatabase: t,
  server,
  staff,
  clients,
} = useOAuthServer({ clients: { standard: { environment: 'production', scopes: ['openid', 'read_only'] } } });

let fapi: FapiClient;
let par: string;
let tokenUrl: string;

beforeAll(async () => {
  fapi = await registerFapiClient(server);
  await createAccount(server.db, staff, 'production');
  par = fapi.as.pushed_authorization_request_endpoint!;
  tokenUrl = endpoints(server, 'production').token;
});

const pkce = { code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' };
const pushed = (form: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(par, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form),
  });
const authParams = {
  client_id: '',
  redirect_uri: FAPI_REDIRECT.production,
  response_type: 'code',
  scope: 'openid read_only read:bank_accounts',
  // Bank data is asked for with a consent request (docs/bank-data.md, "Consents").
  authorization_details: JSON.stringify([{ type: 'fdx_v1.0', consentRequest: DEFAULT_CONSENT_REQUEST }]),
  ...pkce,
};
const assertionForm = async (overrides: Record<string, unknown> = {}, key = fapi.signingKey, alg = 'ES256') => ({
  client_assertion_type: ASSERTION_TYPE,
  client_assertion: await clientAssertion(fapi, key, overrides, alg),
});

describe('pushed authorization requests', () => {
  it('an authorization request that was not pushed is refused', async () => {
    const url = new URL(endpoints(server, 'production').authorize);
    for (const [k, v] of Object.entries({ ...authParams, client_id: fapi.client_id, state: 'abc' })) url.searchParams.set(k, v);
    const response = await fetch(url, { redirect: 'manual' });
    const location = new URL(response.headers.get('location') ?? 'http://none/');
    expect(response.status).toBe(303);
    expect(location.origin + location.pathname).toBe(FAPI_REDIRECT.production);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toMatch(/pushed authorization request/i);
    expect(location.searchParams.get('iss')).toBe(fapi.as.issuer);
  });

  it('a push without client authentication is 401 invalid_client', async () => {
    const response = await pushed({ ...authParams, client_id: fapi.client_id });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: string }).error).toBe('invalid_client');
  });

  it('a fapi2 client presenting a secret (HTTP Basic) is refused', async () => {
    const response = await pushed(
      { ...authParams, client_id: fapi.client_id },
      { authorization: basic(fapi.client_id, 'a-guessed-secret') },
    );
    expect(response.status).toBe(401);
    const token = await fetch(tokenUrl, {
      method: 'POST',
      headers: { authorization: basic(fapi.client_id, 'a-guessed-secret'), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=authorization_code&code=x&code_verifier=' + 'a'.repeat(43),
    });
    expect(token.status).toBe(401);
  });

  it('a standard client cannot push (it keeps the authorization endpoint as before)', async () => {
    const response = await pushed(
      { ...authParams, client_id: clients.standard.client_id, redirect_uri: 'https://app.example.org/callback', scope: 'openid read_only' },
      { authorization: basic(clients.standard.client_id, clients.standard.client_secret) },
    );
    expect(response.status).toBe(401);
  });

  it('a request_uri lives 60 seconds', async () => {
    const response = await pushed({ ...authParams, client_id: fapi.client_id, ...(await assertionForm()) });
    expect(response.status).toBe(201);
    const body = (await response.json()) as { request_uri: string; expires_in: number };
    expect(body.expires_in).toBe(60);
    const url = new URL(endpoints(server, 'production').authorize);
    url.searchParams.set('client_id', fapi.client_id);
    url.searchParams.set('request_uri', body.request_uri);
    const first = await fetch(url, { redirect: 'manual' });
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toContain('/oauth/interaction/');
  });

  it('the pushed parameters meet the same checks: a scope outside the registration, no PKCE, plain PKCE', async () => {
    const base = { ...authParams, client_id: fapi.client_id };
    const scope = await pushed({ ...base, scope: 'openid read_write', ...(await assertionForm()) });
    expect(scope.status).toBe(400);
    expect(((await scope.json()) as { error: string }).error).toBe('invalid_scope');
    const { code_challenge: _c, code_challenge_method: _m, ...noPkce } = base;
    expect((await pushed({ ...noPkce, ...(await assertionForm()) })).status).toBe(400);
    expect(
      (await pushed({ ...base, code_challenge_method: 'plain', code_challenge: 'a'.repeat(43), ...(await assertionForm()) })).status,
    ).toBe(400);
  });
});

describe('private_key_jwt', () => {
  const refused = async (form: Record<string, string>) => {
    const response = await pushed({ ...authParams, client_id: fapi.client_id, ...form });
    return { status: response.status, body: (await response.json()) as { error: string } };
  };

  it('an assertion whose aud is an array, or the token endpoint, is refused: aud is the issuer as a string', async () => {
    expect(await refused(await assertionForm({ aud: [fapi.as.issuer] }))).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    expect(await refused(await assertionForm({ aud: tokenUrl }))).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    expect(await refused(await assertionForm({ aud: 'https://elsewhere.example.org' }))).toMatchObject({ status: 401 });
  });

  it('an assertion is accepted once', async () => {
    const form = await assertionForm();
    expect((await pushed({ ...authParams, client_id: fapi.client_id, ...form })).status).toBe(201);
    expect(await refused(form)).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
  });

  it('an expired assertion, or one signed by an unregistered key, is refused', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect((await refused(await assertionForm({ iat: now - 200, exp: now - 100 }))).status).toBe(401);
    expect((await refused(await assertionForm({}, await keyPair()))).status).toBe(401);
  });

  it('an RS256 assertion is refused, PS256 and EdDSA are accepted', async () => {
    for (const [alg, accepted] of [
      ['RS256', false],
      ['PS256', true],
      ['EdDSA', true],
    ] as const) {
      const key = await keyPair(alg);
      const other = await registerFapiClient(server, { signingKey: key });
      const response = await pushed({
        ...authParams,
        client_id: other.client_id,
        client_assertion_type: ASSERTION_TYPE,
        client_assertion: await clientAssertion(other, key, {}, alg),
      });
      expect(response.status, alg).toBe(accepted ? 201 : 401);
    }
  });
});

describe('tokens of a fapi2 client', () => {
  let tokens: oauth.TokenEndpointResponse;
  let callback: URL;
  let requestUri: string;

  beforeAll(async () => {
    const pushedRequest = await push(fapi);
    requestUri = pushedRequest.requestUri;
    callback = await approve(server, fapi, requestUri, { login: staff.users.admin });
    tokens = await exchange(fapi, callback, pushedRequest.state, pushedRequest.verifier);
  });

  it('the request_uri that issued the code cannot be used again', async () => {
    const url = new URL(endpoints(server, 'production').authorize);
    url.searchParams.set('client_id', fapi.client_id);
    url.searchParams.set('request_uri', requestUri);
    const again = await fetch(url, { redirect: 'manual' });
    expect(again.status).toBe(400);
    expect(await again.text()).toMatch(/request_uri/);
  });

  it('the authorization response names the issuer (RFC 9207) and the code lives 60 seconds', async () => {
    expect(callback.searchParams.get('iss')).toBe(fapi.as.issuer);
    const code = await t.db
      .selectFrom('oidc_models')
      .select(['expires_at', 'payload'])
      .where('model', '=', 'AuthorizationCode')
      .orderBy('expires_at', 'desc')
      .executeTakeFirstOrThrow();
    const payload = code.payload as { iat: number; exp: number };
    expect(payload.exp - payload.iat).toBe(60);
  });

  it('a used code is invalid_grant with 400, as RFC 6749 says', async () => {
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: FAPI_REDIRECT.production,
      code_verifier: 'a'.repeat(43),
      ...(await assertionForm()),
    });
    const proof = await dpopProof(fapi.dpopKey, { method: 'POST', url: tokenUrl });
    const response = await fetch(tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof },
      body: form,
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe('invalid_grant');
  });

  it('a refresh token works only with the key it was issued to, and is not rotated', async () => {
    const other = oauth.DPoP(fapi.client, await keyPair());
    const stolen = await oauth.refreshTokenGrantRequest(fapi.as, fapi.client, fapi.auth, tokens.refresh_token!, {
      DPoP: other,
      ...insecure,
    });
    expect(stolen.status).toBe(400);
    expect(((await stolen.json()) as { error: string }).error).toBe('invalid_grant');
    const bare = await oauth.refreshTokenGrantRequest(fapi.as, fapi.client, fapi.auth, tokens.refresh_token!, insecure);
    expect(bare.status).toBe(400);
    for (let i = 0; i < 2; i += 1) {
      const refreshed = await oauth.processRefreshTokenResponse(
        fapi.as,
        fapi.client,
        await oauth.refreshTokenGrantRequest(fapi.as, fapi.client, fapi.auth, tokens.refresh_token!, { DPoP: fapi.dpop, ...insecure }),
      );
      expect(refreshed.token_type).toBe('dpop');
      expect(refreshed.refresh_token ?? tokens.refresh_token).toBe(tokens.refresh_token);
    }
  });

  it('each use of the refresh token moves its expiry 31 days ahead (it is not rotated)', async () => {
    const row = () =>
      t.db
        .selectFrom('oidc_models')
        .select(['expires_at'])
        .where('model', '=', 'RefreshToken')
        .where('id', '=', hashId(tokens.refresh_token!))
        .executeTakeFirstOrThrow();
    await setModelExpiry(t.db, 'production', 'RefreshToken', hashId(tokens.refresh_token!), Math.floor(Date.now() / 1000) + 100);
    expect((await row()).expires_at!.getTime()).toBeLessThan(Date.now() + 200_000);
    await oauth.processRefreshTokenResponse(
      fapi.as,
      fapi.client,
      await oauth.refreshTokenGrantRequest(fapi.as, fapi.client, fapi.auth, tokens.refresh_token!, { DPoP: fapi.dpop, ...insecure }),
    );
    const days = ((await row()).expires_at!.getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(30.9);
    expect(days).toBeLessThanOrEqual(31);
  });

  it('a DPoP proof is accepted once at the token endpoint', async () => {
    const proof = await dpopProof(fapi.dpopKey, { method: 'POST', url: tokenUrl });
    const send = async () =>
      fetch(tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, ...(await assertionForm()) }),
      });
    expect((await send()).status).toBe(200);
    const again = await send();
    expect(again.status).toBe(400);
  });
});

describe('replays across two processes', () => {
  let other: OAuthTestServer;
  beforeAll(async () => {
    other = await startOAuthServer(t.db, { base_url: server.urls.api, clients_file: server.config.clients_file });
  });
  afterAll(async () => {
    await other?.close();
  });

  it('a client assertion is accepted once across two processes', async () => {
    const body = new URLSearchParams({ ...authParams, client_id: fapi.client_id, ...(await assertionForm()) }).toString();
    const host = new URL(server.urls.api).host;
    const post = (origin: string) =>
      statusAtHost(`${origin}/auth/oauth/par`, host, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
    const statuses = await Promise.all([post(server.urls.api), post(other.urls.api)]);
    expect(statuses.sort()).toEqual([201, 401]);
  });
});
