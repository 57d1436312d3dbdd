import crypto from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ASSERTION_TYPE, clientAssertion, fapiTokens, FAPI_REDIRECT, registerFapiClient, type FapiClient } from '../helpers/fapi.js';
import { dpopProof } from '../helpers/dpop-proof.js';
import { dpopCall, recipientToken } from '../helpers/fdx-consent.js';
import { apiRequest } from '../helpers/gateway.js';
import { captureLogs } from '../helpers/log-capture.js';
import type { OAuthTestServer } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Attacks on what a bank-data (fapi2) client signs and where it calls from (docs/bank-data.md,
 * "Profiles", "Calling the API"):
 * - a DPoP proof made long ago (a captured one, replayed within the library's 300-second window)
 *   or dated ahead, at the token, PAR and UserInfo endpoints and at the gateway: one window, 60 s
 *   back and 10 s ahead, everywhere;
 * - a client assertion without iat, dated an hour ahead, or valid for ten years (a stolen one
 *   stays usable), at every endpoint where a client authenticates;
 * - a consent id (the Consent API's handle on a consent) written into the access log;
 * - an unknown or revoked token sent with the DPoP scheme, told it is "not bound to a DPoP key".
 * The clock is held for the window checks, so 59 and 61 seconds are exact.
 */
const logs = captureLogs('info');
const { server, staff } = useOAuthServer({ logger: logs.logger });

/** A fapi2 client without bank-data scopes: these checks concern what it signs, not what it may read. */
const SCOPES = ['openid', 'offline_access', 'read_only'];

let fapi: FapiClient;
let urls: { token: string; par: string; userinfo: string; revocation: string; introspection: string };

async function fapiClient(target: OAuthTestServer = server, ipAllowList?: string[]): Promise<FapiClient> {
  const client = await registerFapiClient(target, { scopes: SCOPES, ...(ipAllowList ? { ipAllowList } : {}) });
  return { ...client, scope: SCOPES.join(' ') };
}

beforeAll(async () => {
  fapi = await fapiClient();
  urls = {
    token: fapi.as.token_endpoint!,
    par: fapi.as.pushed_authorization_request_endpoint!,
    userinfo: fapi.as.userinfo_endpoint!,
    revocation: fapi.as.revocation_endpoint!,
    introspection: fapi.as.introspection_endpoint!,
  };
});

afterEach(() => {
  vi.useRealTimers();
});

/** Holds the clock (Date only: timers run) at a whole second; returns it in seconds. */
function holdClock(): number {
  const now = Math.floor(Date.now() / 1000);
  vi.useFakeTimers({ toFake: ['Date'], now: now * 1000 });
  return now;
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields);
const post = (url: string, body: URLSearchParams, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });
const assertion = async (client: FapiClient, overrides: Record<string, unknown> = {}) => ({
  client_assertion_type: ASSERTION_TYPE,
  client_assertion: await clientAssertion(client, client.signingKey, overrides),
});
const pushForm = (client: FapiClient) => ({
  client_id: client.client_id,
  redirect_uri: FAPI_REDIRECT.production,
  response_type: 'code',
  scope: client.scope,
  code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  code_challenge_method: 'S256',
});

async function refusal(response: Response) {
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : {}) as { error?: string; error_description?: string } };
}

describe('DPoP proofs are fresh for 60 seconds back and 10 seconds ahead at every endpoint', () => {
  const OFFSETS = [
    { iat: -61, accepted: false },
    { iat: 11, accepted: false },
    { iat: -59, accepted: true },
    { iat: 9, accepted: true },
  ];

  it('the token endpoint (a client-credentials grant)', async () => {
    for (const { iat, accepted } of OFFSETS) {
      const now = holdClock();
      const proof = await dpopProof(fapi.dpopKey, { method: 'POST', url: urls.token }, { iat: now + iat });
      const answer = await refusal(
        await post(urls.token, form({ grant_type: 'client_credentials', ...(await assertion(fapi)) }), { dpop: proof }),
      );
      if (accepted) expect(answer.status, `iat ${iat}: ${JSON.stringify(answer.body)}`).toBe(200);
      else
        expect(answer, `iat ${iat}`).toEqual({
          status: 400,
          body: { error: 'invalid_dpop_proof', error_description: expect.stringMatching(/60 seconds before and 10 seconds after/) },
        });
    }
  });

  it('the pushed authorization request endpoint', async () => {
    for (const { iat, accepted } of OFFSETS) {
      const now = holdClock();
      const proof = await dpopProof(fapi.dpopKey, { method: 'POST', url: urls.par }, { iat: now + iat });
      const answer = await refusal(await post(urls.par, form({ ...pushForm(fapi), ...(await assertion(fapi)) }), { dpop: proof }));
      if (accepted) expect(answer.status, `iat ${iat}: ${JSON.stringify(answer.body)}`).toBe(201);
      else expect(answer, `iat ${iat}`).toMatchObject({ status: 400, body: { error: 'invalid_dpop_proof' } });
    }
  });

  it('the UserInfo endpoint, with a DPoP challenge', async () => {
    const tokens = await fapiTokens(server, fapi, { login: staff.users.admin });
    for (const { iat, accepted } of OFFSETS) {
      const now = holdClock();
      const proof = await dpopProof(
        fapi.dpopKey,
        { method: 'GET', url: urls.userinfo, accessToken: tokens.access_token },
        { iat: now + iat },
      );
      const response = await fetch(urls.userinfo, { headers: { authorization: `DPoP ${tokens.access_token}`, dpop: proof } });
      const answer = await refusal(response);
      if (accepted) expect(answer.status, `iat ${iat}: ${JSON.stringify(answer.body)}`).toBe(200);
      else {
        expect(answer, `iat ${iat}`).toMatchObject({ status: 401, body: { error: 'invalid_dpop_proof' } });
        expect(response.headers.get('www-authenticate')).toMatch(/^DPoP .*error="invalid_dpop_proof"/);
      }
    }
  });

  it('the gateway (the Consent API with the recipient’s own token)', async () => {
    const token = await recipientToken(fapi);
    const path = `/fdx/v6/consents/${crypto.randomBytes(16).toString('base64url')}`;
    for (const { iat, accepted } of OFFSETS) {
      const now = holdClock();
      const proof = await dpopProof(
        fapi.dpopKey,
        { method: 'GET', url: `${server.urls.api}${path}`, accessToken: token },
        { iat: now + iat },
      );
      const response = await apiRequest(server, 'production', 'GET', path, { headers: { authorization: `DPoP ${token}`, dpop: proof } });
      // Accepted: the proof passes and the consent is simply unknown.
      expect(response.status, `iat ${iat}: ${JSON.stringify(response.body)}`).toBe(accepted ? 404 : 401);
      if (!accepted) expect(response.headers.get('www-authenticate')).toMatch(/error="invalid_dpop_proof"/);
    }
  });
});

describe('client assertions are made just now and live at most 5 minutes', () => {
  /** Every endpoint where a fapi2 client authenticates, and how it answers an accepted assertion. */
  const sends: [string, (client: FapiClient, fields: Record<string, string>) => Promise<Response>, number][] = [
    [
      'token',
      async (client, fields) =>
        post(urls.token, form({ grant_type: 'client_credentials', ...fields }), {
          dpop: await dpopProof(client.dpopKey, { method: 'POST', url: urls.token }),
        }),
      200,
    ],
    ['pushed authorization request', (client, fields) => post(urls.par, form({ ...pushForm(client), ...fields })), 201],
    ['revocation', (_client, fields) => post(urls.revocation, form({ token: 'not-a-token', ...fields })), 200],
    ['introspection', (_client, fields) => post(urls.introspection, form({ token: 'not-a-token', ...fields })), 200],
  ];

  it.each(sends)(
    'at the %s endpoint: no iat, iat an hour ahead or a minute old, ten years of exp are invalid_client saying why',
    async (_name, send, ok) => {
      const now = holdClock();
      const cases: [Record<string, unknown>, RegExp | undefined][] = [
        [{ iat: undefined, exp: now + 60 }, /iat/],
        [{ iat: now + 3600, exp: now + 3660 }, /iat.*10 seconds/],
        [{ iat: now + 11, exp: now + 60 }, /iat.*10 seconds/],
        [{ iat: now - 61, exp: now + 60 }, /more than 60 seconds ago \(iat\)/],
        [{ iat: now, exp: now + 10 * 365 * 86_400 }, /exp.*300 seconds/],
        [{ iat: now, exp: now + 301 }, /exp.*300 seconds/],
        [{ iat: now - 59, exp: now + 240 }, undefined],
        [{ iat: now + 9, exp: now + 300 }, undefined],
      ];
      for (const [claims, rule] of cases) {
        const response = await send(fapi, await assertion(fapi, claims));
        const answer = await refusal(response);
        if (!rule) {
          expect(answer.status, `${JSON.stringify(claims)}: ${JSON.stringify(answer.body)}`).toBe(ok);
          continue;
        }
        expect(answer, JSON.stringify(claims)).toEqual({
          status: 401,
          body: { error: 'invalid_client', error_description: expect.stringMatching(rule) },
        });
        expect(response.headers.get('www-authenticate')).toMatch(/^Basic .*error="invalid_client"/);
      }
    },
  );
});

describe("a client's IP allow-list guards the API, not the token endpoint", () => {
  it('a client outside its ranges gets its token, and the IP-restricted API refuses that token with the four-member 403', async () => {
    // The ranges say where the API may be called from (docs/oauth.md, "IP allow-lists"); the
    // token endpoint holds the client to its credentials (and a fapi2 token to its DPoP key).
    const outside = await fapiClient(server, ['203.0.113.0/24']);
    const token = await recipientToken(outside);
    const response = await dpopCall(server, outside, token, 'GET', '/fdx/v6/consents/unknown');
    expect(response.status).toBe(403);
    expect(Object.keys(response.body as object).sort()).toEqual(['detail', 'status', 'title', 'type']);
  });
});

describe('a consent id in a Consent API path', () => {
  it('is redacted in the access log, as a secret path segment is', async () => {
    const consentId = crypto.randomBytes(16).toString('base64url');
    const consentLines = () => logs.records().filter((r) => r.msg === 'request' && String(r.path).startsWith('/fdx/v6/consents'));
    const before = consentLines().length;
    for (const path of [`/fdx/v6/consents/${consentId}`, `/fdx/v6/consents/${consentId}/revocation`]) {
      const response = await apiRequest(server, 'production', 'GET', path, { bearer: 'not-a-token' });
      expect(response.status).toBe(401);
    }
    expect(
      consentLines()
        .slice(before)
        .map((r) => r.path),
    ).toEqual(['/fdx/v6/consents/[redacted]', '/fdx/v6/consents/[redacted]/revocation']);
    expect(logs.chunks.join('')).not.toContain(consentId);
  });
});

describe('an unknown or revoked token sent with the DPoP scheme', () => {
  it('is told the token is invalid, expired or revoked, not that it is unbound', async () => {
    const token = await recipientToken(fapi);
    const revoked = await post(urls.revocation, form({ token, ...(await assertion(fapi)) }));
    expect(revoked.status).toBe(200);
    for (const [what, value, path] of [
      ['a revoked client token at the Consent API', token, `/fdx/v6/consents/${crypto.randomBytes(16).toString('base64url')}`],
      ['a made-up token at the FDX API', crypto.randomBytes(32).toString('base64url'), '/fdx/v6/accounts'],
    ] as const) {
      const proof = await dpopProof(fapi.dpopKey, { method: 'GET', url: `${server.urls.api}${path}`, accessToken: value });
      const response = await apiRequest(server, 'production', 'GET', path, { headers: { authorization: `DPoP ${value}`, dpop: proof } });
      expect(response.status, what).toBe(401);
      expect(response.body.detail, what).toMatch(/invalid, expired or revoked/);
      expect(response.headers.get('www-authenticate'), what).toMatch(/^DPoP .*error="invalid_token"/);
    }
  });
});
