import http from 'node:http';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fapiTokens, insecure, keyPair, registerFapiClient, type FapiClient } from '../helpers/fapi.js';
import { dpopProof } from '../helpers/dpop-proof.js';
import { apiGet } from '../helpers/gateway.js';
import { createAccount } from '../helpers/fdx.js';
import { startOAuthServer, type OAuthTestServer } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { statusAtHost } from '../helpers/at-host.js';

/**
 * The resource gateway holds a DPoP-bound access token to its key (RFC 9449 7; docs/bank-data.md,
 * "Calling the API"): every call needs a fresh proof for that method, URL and token, signed by
 * the bound key, used once across every process.
 */
const { testDatabase: t, server, staff } = useOAuthServer();

let fapi: FapiClient;
let token: string;
let accountsUrl: string;

beforeAll(async () => {
  fapi = await registerFapiClient(server);
  // Bank data is read under a consent, of an account the admin ticks.
  await createAccount(server.db, staff, 'production');
  token = (await fapiTokens(server, fapi, { login: staff.users.admin })).access_token;
  accountsUrl = `${server.urls.api}/fdx/v6/accounts`;
});

const call = (headers: Record<string, string>) => apiGet(server, 'production', '/fdx/v6/accounts', { headers });
const withProof = async (overrides: Record<string, unknown> = {}, key = fapi.dpopKey, accessToken = token) => ({
  authorization: `DPoP ${token}`,
  dpop: await dpopProof(key, { method: 'GET', url: accountsUrl, accessToken }, overrides),
});

describe('DPoP-bound access tokens at the gateway', () => {
  it('a call with a fresh proof from the bound key is served (oauth4webapi)', async () => {
    const response = await oauth.protectedResourceRequest(token, 'GET', new URL(accountsUrl), new Headers(), null, {
      DPoP: fapi.dpop,
      ...insecure,
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { accounts: unknown[] }).accounts).toBeInstanceOf(Array);
  });

  it('the token sent as Bearer is refused with a DPoP challenge', async () => {
    const response = await call({ authorization: `Bearer ${token}` });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^DPoP algs="PS256 ES256 EdDSA", error="invalid_token"/);
  });

  it('the DPoP scheme without a proof, or with two, is refused', async () => {
    const none = await call({ authorization: `DPoP ${token}` });
    expect(none.status, JSON.stringify(none.body)).toBe(401);
    const proof = (await withProof()).dpop;
    const twice = await new Promise<number>((resolve, reject) => {
      const request = http.request(
        accountsUrl,
        { headers: ['host', new URL(accountsUrl).host, 'authorization', `DPoP ${token}`, 'dpop', proof, 'dpop', proof] },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      );
      request.on('error', reject);
      request.end();
    });
    expect(twice).toBe(401);
  });

  it.each([
    ['another method', { htm: 'POST' }, /method/],
    ['another URL', { htu: 'https://api.example.org/fdx/v6/accounts' }, /URL/],
    ['another path on this host', { htu: 'PLACEHOLDER' }, /URL/],
    ['no ath', { ath: undefined }, /access token/],
    ['iat 70 s in the future', { iat: Math.floor(Date.now() / 1000) + 70 }, /just now/],
    ['iat 2 minutes ago', { iat: Math.floor(Date.now() / 1000) - 120 }, /just now/],
    ['no jti', { jti: undefined }, /jti/],
  ] as [string, Record<string, unknown>, RegExp][])('a proof for %s is refused', async (_what, overrides, reason) => {
    const resolved = overrides.htu === 'PLACEHOLDER' ? { htu: `${server.urls.api}/fdx/v6/customers/current` } : overrides;
    const response = await call(await withProof(resolved));
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_dpop_proof"');
    expect(String(response.body.detail)).toMatch(reason);
  });

  it('a proof for another access token is refused', async () => {
    const response = await call(await withProof({}, fapi.dpopKey, 'another-access-token'));
    expect(response.status).toBe(401);
    expect(String(response.body.detail)).toMatch(/another access token/);
  });

  it('a proof signed by another key than the bound one is refused', async () => {
    const response = await call(await withProof({}, await keyPair()));
    expect(response.status).toBe(401);
    expect(String(response.body.detail)).toMatch(/another key/);
  });

  it('a proof that is not a dpop+jwt, or signed RS256, is refused', async () => {
    const rsa = await keyPair('RS256');
    const rs256 = await dpopProof(rsa, { method: 'GET', url: accountsUrl, accessToken: token }, {}, { alg: 'RS256' });
    expect((await call({ authorization: `DPoP ${token}`, dpop: rs256 })).status).toBe(401);
    const typ = await dpopProof(fapi.dpopKey, { method: 'GET', url: accountsUrl, accessToken: token }, {}, { typ: 'JWT' });
    expect((await call({ authorization: `DPoP ${token}`, dpop: typ })).status).toBe(401);
  });

  it('a proof made on a clock up to 10 seconds ahead is accepted (the clock tolerance)', async () => {
    expect((await call(await withProof({ iat: Math.floor(Date.now() / 1000) + 8 }))).status).toBe(200);
  });

  it('a proof is accepted once: the same proof again is refused', async () => {
    const headers = await withProof();
    expect((await call(headers)).status).toBe(200);
    const again = await call(headers);
    expect(again.status).toBe(401);
    expect(String(again.body.detail)).toMatch(/already used/);
  });

  it('a burst of the same proof is accepted exactly once', async () => {
    const headers = await withProof();
    const statuses = await Promise.all(Array.from({ length: 8 }, () => fetch(accountsUrl, { headers }).then((r) => r.status)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 401)).toHaveLength(7);
  });

  it('a bearer token that is not bound cannot be sent with the DPoP scheme', async () => {
    const response = await call({ authorization: 'DPoP not-a-bound-token-0123456789' });
    expect(response.status).toBe(401);
  });
});

describe('DPoP proofs across two processes', () => {
  let other: OAuthTestServer;
  beforeAll(async () => {
    // A second process of the same deployment: same database, same public API origin.
    other = await startOAuthServer(t.db, { base_url: server.urls.api, clients_file: server.config.clients_file });
  });
  afterAll(async () => {
    await other?.close();
  });

  it('a proof accepted by one process is refused by the other', async () => {
    const headers = await withProof();
    const host = new URL(server.urls.api).host;
    const [here, there] = await Promise.all([
      fetch(accountsUrl, { headers }).then((r) => r.status),
      statusAtHost(`${other.urls.api}/fdx/v6/accounts`, host, { headers }),
    ]);
    expect([here, there].sort()).toEqual([200, 401]);
  });
});
