/**
 * The discovery documents say what is true. The OpenID document is read and every member it
 * publishes is probed against the running server (a member without a probe fails the test,
 * so a new member must come with its proof); the RFC 8414 document is the same minus the
 * OpenID-only members.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as oauth from 'oauth4webapi';
import { beforeAll, describe, expect, it } from 'vitest';
import { authorizationRequest, authorize, basic, endpoints, obtainTokens, tokenRequest, type Env } from '../helpers/flow.js';
import { useOAuthServer, type RegisteredClient } from '../helpers/use-oauth-server.js';
import { createStaff } from '../helpers/oauth-server.js';
import { isOpenIdOnly } from '../../src/oidc/middleware/discovery.js';
import {
  ASSERTION_TYPE,
  clientAssertion,
  fapiTokens,
  FAPI_REDIRECT,
  keyPair,
  push,
  registerFapiClient,
  type FapiClient,
} from '../helpers/fapi.js';
import { dpopProof } from '../helpers/dpop-proof.js';
import { PROJECT_ROOT } from '../../src/config/paths.js';

const ALL_SCOPES = ['read_only', 'read_write', 'openid', 'offline_access', 'read:bank_accounts', 'sync:connected_accounts'];
const redirectFor = (environment: Env) =>
  environment === 'sandbox' ? 'http://127.0.0.1:9999/callback' : 'https://app.example.org/callback';

const { server, staff, testDatabase: t } = useOAuthServer();

type Doc = Record<string, unknown>;

async function getDocument(origin: string, path: string) {
  const response = await fetch(`${origin}${path}`);
  const text = await response.text();
  return { response, doc: (response.status === 200 ? JSON.parse(text) : {}) as Doc };
}

function decodeJwt(jwt: string) {
  const [header, payload, signature] = jwt.split('.') as [string, string, string];
  return {
    header: JSON.parse(Buffer.from(header, 'base64url').toString()) as { alg: string; kid: string },
    claims: JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>,
    signingInput: `${header}.${payload}`,
    signature: Buffer.from(signature, 'base64url'),
  };
}

/** Everything the probes share for one environment: its document, a client and one completed flow. */
interface Probe {
  environment: Env;
  doc: Doc;
  client: RegisteredClient;
  other: RegisteredClient;
  flow: Awaited<ReturnType<typeof obtainTokens>>;
  idToken: ReturnType<typeof decodeJwt>;
  userinfo: Record<string, unknown>;
  /** A bank-data (fapi2) client of this environment. */
  fapi: FapiClient;
}

/** A raw authorization request; answers where it redirected (error redirects need no login). */
async function authorizationRedirect(p: Probe, overrides: Record<string, string | undefined>) {
  const verifier = oauth.generateRandomCodeVerifier();
  const url = new URL(p.doc.authorization_endpoint as string);
  const params: Record<string, string | undefined> = {
    client_id: p.client.client_id,
    redirect_uri: redirectFor(p.environment),
    response_type: 'code',
    scope: 'openid read_only',
    state: 'st-1',
    nonce: 'n-1',
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...overrides,
  };
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  const response = await fetch(url, { redirect: 'manual', headers: { accept: 'text/html' } });
  const location = response.headers.get('location');
  return { status: response.status, location: location ? new URL(location, url) : undefined };
}

/** The error an authorization request was redirected back with (query or, for implicit types, fragment). */
async function authorizationError(p: Probe, overrides: Record<string, string | undefined>) {
  const { location } = await authorizationRedirect(p, overrides);
  expect(location, JSON.stringify(overrides)).toBeDefined();
  expect(location!.origin + location!.pathname).toBe(redirectFor(p.environment));
  const params = new URLSearchParams(location!.search || location!.hash.slice(1));
  return params.get('error');
}

async function postForm(url: string, form: Record<string, string>, authorization?: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization ? { authorization } : {}) },
    body: new URLSearchParams(form),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

/** A fresh token set from the code flow for the owner (of `client`, by default the probes' client). */
async function freshTokens(p: Probe, scope = 'openid read_only', client = p.client) {
  const { tokens } = await obtainTokens(server, {
    environment: p.environment,
    client,
    clientId: client.client_id,
    redirectUri: redirectFor(p.environment),
    scope,
    login: staff.users.owner,
  });
  expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
  return tokens.body as { access_token: string; refresh_token: string; id_token?: string; scope: string };
}

const revocableClient = (p: Probe) =>
  server.registerClient({ environment: p.environment, redirectUris: [redirectFor(p.environment)], scopes: ['openid', 'read_only'] });

/** The client authentication methods the endpoints must refuse (none is listed but client_secret_basic). */
function unlistedAuthentications(client: RegisteredClient): Record<string, { authorization?: string; form: Record<string, string> }> {
  return {
    client_secret_post: { form: { client_id: client.client_id, client_secret: client.client_secret } },
    none: { form: { client_id: client.client_id } },
    client_secret_jwt: {
      form: {
        client_id: client.client_id,
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: 'eyJhbGciOiJIUzI1NiJ9.e30.c2ln',
      },
    },
  };
}

/** A form a fapi2 client authenticates with (a fresh client assertion, private_key_jwt). */
async function assertionOf(fapi: FapiClient): Promise<Record<string, string>> {
  return { client_assertion_type: ASSERTION_TYPE, client_assertion: await clientAssertion(fapi, fapi.signingKey) };
}

/**
 * Probes an `*_endpoint_auth_methods_supported` member of a client-authenticated endpoint:
 * every unlisted method is refused (401 invalid_client) and changes nothing (`afterRefused`
 * checks that), then the listed one works.
 */
async function probeAuthMethods(
  p: Probe,
  member: string,
  endpoint: string,
  form: Record<string, string>,
  expectSuccess: (result: { status: number; body: Record<string, unknown> }) => void,
  afterRefused?: () => Promise<void>,
) {
  expect(p.doc[member]).toEqual(['client_secret_basic', 'private_key_jwt']);
  for (const [method, attempt] of Object.entries(unlistedAuthentications(p.client))) {
    const result = await postForm(endpoint, { ...form, ...attempt.form }, attempt.authorization);
    expect({ method, status: result.status, error: result.body.error }).toEqual({ method, status: 401, error: 'invalid_client' });
  }
  // private_key_jwt is a fapi2 client's method: a standard client's assertion (with a key it never
  // registered) is refused, and a fapi2 client authenticates with one (its request then goes on
  // to be judged: never invalid_client).
  const standard = await postForm(endpoint, {
    ...form,
    client_id: p.client.client_id,
    ...(await assertionOf({ ...p.fapi, client_id: p.client.client_id })),
  });
  expect(standard.status).toBe(401);
  const fapi = await postForm(endpoint, { ...form, ...(await assertionOf(p.fapi)) });
  expect(fapi.body.error).not.toBe('invalid_client');
  await afterRefused?.();
  expectSuccess(await postForm(endpoint, form, basic(p.client.client_id, p.client.client_secret)));
}

/** One probe per member: it checks the value and shows the server behaves as the value says. */
const PROBES: Record<string, (p: Probe) => Promise<void>> = {
  async issuer(p) {
    expect(p.doc.issuer).toBe(endpoints(server, p.environment).api);
    // A real client accepts the document for that issuer (it checks they match) …
    const issuer = new URL(p.doc.issuer as string);
    await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { [oauth.allowInsecureRequests]: true }));
    // … and the ID Token is issued by it.
    expect(p.idToken.claims.iss).toBe(p.doc.issuer);
  },
  async authorization_endpoint(p) {
    expect(p.doc.authorization_endpoint).toBe(endpoints(server, p.environment).authorize);
    // The flow of beforeAll went through it; a request there starts the hosted login.
    const { status, location } = await authorizationRedirect(p, {});
    expect(status).toBe(303);
    expect(location?.pathname).toMatch(/^\/oauth\/interaction\//);
  },
  async end_session_endpoint(p) {
    const { api, endSession } = endpoints(server, p.environment);
    expect(p.doc.end_session_endpoint).toBe(endSession);
    // Browser-facing: on the dashboard host, beside the session cookie, not on the API host.
    expect((await fetch(`${api}${new URL(endSession).pathname}`)).status).toBe(404);
    // It ends the browser session a flow signed in: with that flow's ID Token as the hint, the
    // page posts the provider's form at once, and the next authorization asks to sign in again.
    const flow = await obtainTokens(server, {
      environment: p.environment,
      client: p.client,
      clientId: p.client.client_id,
      redirectUri: redirectFor(p.environment),
      scope: 'openid read_only',
      login: staff.users.owner,
    });
    const hinted = (clientId: string) =>
      `${endSession}?${new URLSearchParams({ id_token_hint: flow.tokens.body.id_token as string, client_id: clientId })}`;
    // A client_id that is not the hint's audience is refused (and ends nothing).
    expect((await flow.browser.request(hinted(p.other.client_id))).status).toBe(400);
    const page = await flow.browser.request(hinted(p.client.client_id));
    expect(page.status).toBe(200);
    expect(page.html).toContain('data-auto-submit');
    const done = await flow.browser.submit(page, '/confirm');
    expect(done.url.pathname).toBe(`${new URL(endSession).pathname}/success`);
    expect(done.html).toContain('You are signed out');
    const next = await authorizationRequest(server, {
      environment: p.environment,
      clientId: p.client.client_id,
      redirectUri: redirectFor(p.environment),
      scope: 'openid read_only',
    });
    expect((await flow.browser.request(next.url.href)).html).toContain('name="password"');
  },
  async token_endpoint(p) {
    const tokens = await freshTokens(p);
    const refreshed = await postForm(
      p.doc.token_endpoint as string,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      basic(p.client.client_id, p.client.client_secret),
    );
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.access_token).toBeTruthy();
  },
  async jwks_uri(p) {
    const response = await fetch(p.doc.jwks_uri as string);
    expect(response.status).toBe(200);
    const { keys } = (await response.json()) as { keys: (crypto.JsonWebKey & { kid: string })[] };
    // The ID Token's signature verifies with the key of its kid.
    const jwk = keys.find((k) => k.kid === p.idToken.header.kid);
    expect(jwk).toBeDefined();
    const key = crypto.createPublicKey({ key: jwk!, format: 'jwk' });
    expect(crypto.verify('sha256', Buffer.from(p.idToken.signingInput), key, p.idToken.signature)).toBe(true);
  },
  async userinfo_endpoint(p) {
    for (const method of ['GET', 'POST']) {
      const response = await fetch(p.doc.userinfo_endpoint as string, {
        method,
        headers: { authorization: `Bearer ${p.flow.tokens.body.access_token as string}` },
      });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { sub: string }).sub).toBe(staff.users.owner.id);
    }
  },
  async introspection_endpoint(p) {
    const result = await postForm(
      p.doc.introspection_endpoint as string,
      { token: p.flow.tokens.body.access_token as string },
      basic(p.client.client_id, p.client.client_secret),
    );
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ active: true, client_id: p.client.client_id });
  },
  async revocation_endpoint(p) {
    // Revoking ends the authorization, which later flows of the same client would reuse: a client of its own.
    const client = await revocableClient(p);
    const tokens = await freshTokens(p, 'openid read_only', client);
    const auth = basic(client.client_id, client.client_secret);
    expect((await postForm(p.doc.revocation_endpoint as string, { token: tokens.access_token }, auth)).status).toBe(200);
    expect((await postForm(p.doc.introspection_endpoint as string, { token: tokens.access_token }, auth)).body).toEqual({ active: false });
  },
  async response_types_supported(p) {
    expect(p.doc.response_types_supported).toEqual(['code']);
    expect(p.flow.callback.searchParams.get('code')).toBeTruthy();
    for (const responseType of ['token', 'id_token', 'code id_token', 'code token', 'id_token token', 'none']) {
      expect(await authorizationError(p, { response_type: responseType }), responseType).toBe('unsupported_response_type');
    }
  },
  async response_modes_supported(p) {
    expect(p.doc.response_modes_supported).toEqual(['query']);
    // Each listed mode works: the code comes back where that mode puts it.
    for (const mode of p.doc.response_modes_supported as string[]) {
      const result = await authorize(server, {
        environment: p.environment,
        clientId: p.client.client_id,
        redirectUri: redirectFor(p.environment),
        scope: 'read_only',
        login: staff.users.owner,
        extraParams: { response_mode: mode },
      });
      expect(mode).toBe('query');
      expect(result.callback.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(result.callback.hash).toBe('');
    }
  },
  async grant_types_supported(p) {
    expect(p.doc.grant_types_supported).toEqual(['authorization_code', 'refresh_token', 'client_credentials']);
    // authorization_code: the flow of beforeAll; refresh_token: token_endpoint's probe;
    // client_credentials: a fapi2 client's own token (a standard client is unauthorized_client). Others are refused.
    const own = await oauth.clientCredentialsGrantRequest(
      p.fapi.as,
      p.fapi.client,
      p.fapi.auth,
      {},
      { DPoP: p.fapi.dpop, [oauth.allowInsecureRequests]: true },
    );
    expect((await oauth.processClientCredentialsResponse(p.fapi.as, p.fapi.client, own)).token_type).toBe('dpop');
    const standard = await tokenRequest(server, p.environment, p.client, { grant_type: 'client_credentials' });
    expect({ status: standard.status, error: standard.body.error }).toEqual({ status: 400, error: 'unauthorized_client' });
    for (const grantType of [
      'password',
      'implicit',
      'urn:ietf:params:oauth:grant-type:device_code',
      'urn:ietf:params:oauth:grant-type:jwt-bearer',
      'urn:ietf:params:oauth:grant-type:token-exchange',
      'urn:openid:params:grant-type:ciba',
    ]) {
      const result = await tokenRequest(server, p.environment, p.client, {
        grant_type: grantType,
        username: staff.users.owner.email,
        password: staff.users.owner.password,
        scope: 'read_only',
      });
      expect({ grantType, status: result.status, error: result.body.error }).toEqual({
        grantType,
        status: 400,
        error: 'unsupported_grant_type',
      });
    }
  },
  async code_challenge_methods_supported(p) {
    expect(p.doc.code_challenge_methods_supported).toEqual(['S256']);
    // S256: every flow here. plain, another method or none: refused.
    expect(await authorizationError(p, { code_challenge_method: 'plain', code_challenge: 'a'.repeat(43) })).toBe('invalid_request');
    expect(await authorizationError(p, { code_challenge_method: 'S512' })).toBe('invalid_request');
    expect(await authorizationError(p, { code_challenge: undefined, code_challenge_method: undefined })).toBe('invalid_request');
  },
  async token_endpoint_auth_methods_supported(p) {
    const tokens = await freshTokens(p);
    // The refresh works after the refused attempts: they consumed nothing.
    await probeAuthMethods(
      p,
      'token_endpoint_auth_methods_supported',
      p.doc.token_endpoint as string,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      (r) => expect(r.status).toBe(200),
    );
  },
  async introspection_endpoint_auth_methods_supported(p) {
    await probeAuthMethods(
      p,
      'introspection_endpoint_auth_methods_supported',
      p.doc.introspection_endpoint as string,
      { token: p.flow.tokens.body.access_token as string },
      (r) => expect(r.body.active).toBe(true),
    );
  },
  async revocation_endpoint_auth_methods_supported(p) {
    const client = await revocableClient(p);
    const tokens = await freshTokens(p, 'openid read_only', client);
    const active = async () =>
      (
        await postForm(
          p.doc.introspection_endpoint as string,
          { token: tokens.access_token },
          basic(client.client_id, client.client_secret),
        )
      ).body.active;
    const refusedRevokedNothing = async () => expect(await active()).toBe(true);
    await probeAuthMethods(
      { ...p, client },
      'revocation_endpoint_auth_methods_supported',
      p.doc.revocation_endpoint as string,
      { token: tokens.access_token },
      (r) => expect(r.status).toBe(200),
      refusedRevokedNothing,
    );
    expect(await active()).toBe(false);
  },
  async scopes_supported(p) {
    expect([...(p.doc.scopes_supported as string[])].sort()).toEqual([...ALL_SCOPES].sort());
    // Each listed scope can be requested (by a client registered with it) and is granted.
    for (const scope of p.doc.scopes_supported as string[]) {
      if (scope === 'offline_access') {
        // "Accepted for compatibility": it grants nothing by itself, so it comes with a
        // resource scope; the request succeeds and a refresh token is issued either way.
        expect((await freshTokens(p, 'read_only offline_access')).refresh_token).toBeTruthy();
        continue;
      }
      expect((await freshTokens(p, scope)).scope.split(' '), scope).toContain(scope);
    }
    // A scope not listed is refused, not silently dropped.
    for (const scope of ['profile', 'email', 'admin'])
      expect(await authorizationError(p, { scope: `openid ${scope}` }), scope).toBe('invalid_scope');
  },
  async subject_types_supported(p) {
    expect(p.doc.subject_types_supported).toEqual(['public']);
    // public: one user has the same sub at every client (pairwise would differ).
    const { tokens } = await obtainTokens(server, {
      environment: p.environment,
      client: p.other,
      clientId: p.other.client_id,
      redirectUri: redirectFor(p.environment),
      scope: 'openid read_only',
      login: staff.users.owner,
    });
    expect(decodeJwt(tokens.body.id_token as string).claims.sub).toBe(p.idToken.claims.sub);
    expect(p.idToken.claims.sub).toBe(staff.users.owner.id);
  },
  async id_token_signing_alg_values_supported(p) {
    expect(p.doc.id_token_signing_alg_values_supported).toEqual(['RS256', 'ES256']);
    // RS256 for a standard client, ES256 for a fapi2 one.
    expect(p.idToken.header.alg).toBe('RS256');
    // openid alone: a request for bank data would need a consent, and the nonprofit accounts to share.
    const fapi = await fapiTokens(server, p.fapi, { login: staff.users.owner, params: { scope: 'openid offline_access' } });
    expect(decodeJwt(fapi.id_token!).header.alg).toBe('ES256');
  },
  async pushed_authorization_request_endpoint(p) {
    expect(p.doc.pushed_authorization_request_endpoint).toBe(`${endpoints(server, p.environment).api}/auth/oauth/par`);
    // A fapi2 client pushes its request there; the authorization endpoint then takes the request_uri.
    const { requestUri } = await push(p.fapi);
    expect(requestUri).toMatch(/^urn:ietf:params:oauth:request_uri:/);
    const url = new URL(p.doc.authorization_endpoint as string);
    url.search = new URLSearchParams({ client_id: p.fapi.client_id, request_uri: requestUri }).toString();
    const response = await fetch(url, { redirect: 'manual' });
    expect(response.status).toBe(303);
    expect(new URL(response.headers.get('location')!, url).pathname).toMatch(/^\/oauth\/interaction\//);
  },
  async dpop_signing_alg_values_supported(p) {
    expect(p.doc.dpop_signing_alg_values_supported).toEqual(['PS256', 'ES256', 'EdDSA']);
    // A push with a DPoP proof binds the code to its key (dpop_jkt): each listed algorithm is accepted, RS256 is not.
    const par = p.doc.pushed_authorization_request_endpoint as string;
    const pushWith = async (alg: 'PS256' | 'ES256' | 'EdDSA' | 'RS256') => {
      const proof = await dpopProof(await keyPair(alg), { method: 'POST', url: par }, {}, { alg });
      const form = {
        client_id: p.fapi.client_id,
        redirect_uri: FAPI_REDIRECT[p.environment],
        response_type: 'code',
        scope: 'openid',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
        ...(await assertionOf(p.fapi)),
      };
      return fetch(par, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: proof },
        body: new URLSearchParams(form),
      }).then((r) => r.status);
    };
    for (const alg of ['PS256', 'ES256', 'EdDSA'] as const) expect(await pushWith(alg), alg).toBe(201);
    expect(await pushWith('RS256')).toBe(400);
  },
  async token_endpoint_auth_signing_alg_values_supported(p) {
    expect(p.doc.token_endpoint_auth_signing_alg_values_supported).toEqual(['PS256', 'ES256', 'EdDSA']);
    // A fapi2 client with a key of each listed algorithm authenticates with it; RS256 is refused.
    for (const alg of ['PS256', 'ES256', 'EdDSA', 'RS256'] as const) {
      const key = await keyPair(alg);
      const fapi = await registerFapiClient(server, { environment: p.environment, signingKey: key });
      const form = {
        client_id: fapi.client_id,
        redirect_uri: FAPI_REDIRECT[p.environment],
        response_type: 'code',
        scope: 'openid',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
        client_assertion_type: ASSERTION_TYPE,
        client_assertion: await clientAssertion(fapi, key, {}, alg),
      };
      const result = await postForm(p.doc.pushed_authorization_request_endpoint as string, form);
      expect(result.status, alg).toBe(alg === 'RS256' ? 401 : 201);
    }
  },
  async authorization_details_types_supported(p) {
    expect(p.doc.authorization_details_types_supported).toEqual(['fdx_v1.0']);
    const detail = (type: string) =>
      JSON.stringify([
        { type, consentRequest: { durationType: 'ONE_TIME', resources: [{ resourceType: 'ACCOUNT', dataClusters: ['TRANSACTIONS'] }] } },
      ]);
    expect((await push(p.fapi, { authorization_details: detail('fdx_v1.0') })).requestUri).toBeTruthy();
    const other = await push(p.fapi, { authorization_details: detail('payment_initiation') }).catch((e: oauth.ResponseBodyError) => e);
    expect((other as oauth.ResponseBodyError).error).toBe('invalid_authorization_details');
  },
  async claims_supported(p) {
    // Every listed claim is one the server supplies, in the ID Token or at UserInfo;
    // auth_time when the request says how recent the sign-in must be (max_age).
    const { tokens } = await obtainTokens(server, {
      environment: p.environment,
      client: p.client,
      clientId: p.client.client_id,
      redirectUri: redirectFor(p.environment),
      scope: 'openid read_only',
      login: staff.users.owner,
      extraParams: { max_age: '3600' },
    });
    const withMaxAge = decodeJwt(tokens.body.id_token as string).claims;
    expect(withMaxAge.auth_time).toEqual(expect.any(Number));
    const supplied = new Set([...Object.keys(p.idToken.claims), ...Object.keys(withMaxAge), ...Object.keys(p.userinfo)]);
    for (const claim of p.doc.claims_supported as string[]) expect(supplied, claim).toContain(claim);
    expect(p.userinfo).toMatchObject({ sub: staff.users.owner.id, email: staff.users.owner.email, email_verified: expect.any(Boolean) });
  },
  async acr_values_supported(p) {
    expect(p.doc.acr_values_supported).toEqual(['urn:almoner:loa:1', 'urn:almoner:loa:2']);
    // loa:1 for a password session; asking for loa:2 gets a second factor first, and says so.
    const user = (await createStaff(t.db)).users.read_only;
    const password = await obtainTokens(server, {
      environment: p.environment,
      client: p.other,
      clientId: p.other.client_id,
      redirectUri: redirectFor(p.environment),
      scope: 'openid read_only',
      login: user,
    });
    expect(decodeJwt(password.tokens.body.id_token as string).claims).toMatchObject({ acr: 'urn:almoner:loa:1', amr: ['pwd'] });
    const stepped = await obtainTokens(server, {
      environment: p.environment,
      client: p.other,
      clientId: p.other.client_id,
      redirectUri: redirectFor(p.environment),
      scope: 'openid read_only',
      login: user,
      extraParams: { acr_values: 'urn:almoner:loa:2' },
    });
    expect(decodeJwt(stepped.tokens.body.id_token as string).claims).toMatchObject({ acr: 'urn:almoner:loa:2', amr: ['pwd', 'otp'] });
  },
  async claim_types_supported(p) {
    expect(p.doc.claim_types_supported).toEqual(['normal']);
    // Normal claims only: no aggregated or distributed claims.
    expect(p.userinfo).not.toHaveProperty('_claim_names');
    expect(p.userinfo).not.toHaveProperty('_claim_sources');
  },
  async authorization_response_iss_parameter_supported(p) {
    expect(p.doc.authorization_response_iss_parameter_supported).toBe(true);
    expect(p.flow.callback.searchParams.get('iss')).toBe(p.doc.issuer);
    expect(
      new URL((await authorizationRedirect(p, { response_type: 'token' })).location!.toString().replace('#', '?')).searchParams.get('iss'),
    ).toBe(p.doc.issuer);
  },
  async request_uri_parameter_supported(p) {
    // Stated (absent would mean true under OpenID Discovery 3) and true to behaviour.
    expect(p.doc.request_uri_parameter_supported).toBe(false);
    expect(await authorizationError(p, { request_uri: 'https://app.example.org/request.jwt' })).toBe('request_uri_not_supported');
  },
  async request_parameter_supported(p) {
    expect(p.doc.request_parameter_supported).toBe(false);
    expect(await authorizationError(p, { request: 'eyJhbGciOiJub25lIn0.eyJzY29wZSI6Im9wZW5pZCJ9.' })).toBe('request_not_supported');
  },
  async claims_parameter_supported(p) {
    expect(p.doc.claims_parameter_supported).toBe(false);
    // The parameter is not read at all: where it is supported, one that is not JSON is
    // invalid_request; here the request goes on to the hosted login.
    const { status, location } = await authorizationRedirect(p, { claims: '{"id_token":' });
    expect(status).toBe(303);
    expect(location?.pathname).toMatch(/^\/oauth\/interaction\//);
  },
};

describe.each(['production', 'sandbox'] as Env[])('the OpenID discovery document (%s)', (environment) => {
  const p = { environment } as Probe;

  beforeAll(async () => {
    const { api } = endpoints(server, environment);
    // A user with a display name, so the name claim has a value to show.
    await t.db.updateTable('users').set({ display_name: 'Olive Owner' }).where('id', '=', staff.users.owner.id).execute();
    p.doc = (await getDocument(api, '/.well-known/openid-configuration')).doc;
    p.client = await server.registerClient({ environment, redirectUris: [redirectFor(environment)], scopes: ALL_SCOPES });
    p.other = await server.registerClient({ environment, redirectUris: [redirectFor(environment)], scopes: ['openid', 'read_only'] });
    p.flow = await obtainTokens(server, {
      environment,
      client: p.client,
      clientId: p.client.client_id,
      redirectUri: redirectFor(environment),
      scope: 'openid read_only',
      login: staff.users.owner,
    });
    if (p.flow.tokens.status !== 200) throw new Error(`flow failed: ${JSON.stringify(p.flow.tokens.body)}`);
    p.idToken = decodeJwt(p.flow.tokens.body.id_token as string);
    p.fapi = await registerFapiClient(server, { environment });
    const info = await fetch(`${api}/auth/oauth/userinfo`, {
      headers: { authorization: `Bearer ${p.flow.tokens.body.access_token as string}` },
    });
    p.userinfo = (await info.json()) as Record<string, unknown>;
  });

  it('has a probe for every member it publishes, and publishes every member probed', () => {
    expect(Object.keys(p.doc).sort()).toEqual(Object.keys(PROBES).sort());
  });

  it.each(Object.keys(PROBES))('%s is true', async (member) => {
    await PROBES[member]!(p);
  });
});

describe.each(['production', 'sandbox'] as Env[])('RFC 8414 authorization server metadata (%s)', (environment) => {
  it('is served on the API host: the OpenID document minus its OpenID-only members, with the same issuer and headers', async () => {
    const { api } = endpoints(server, environment);
    const openid = await getDocument(api, '/.well-known/openid-configuration');
    const metadata = await getDocument(api, '/.well-known/oauth-authorization-server');
    expect(metadata.response.status).toBe(200);
    expect(metadata.response.headers.get('content-type')).toMatch(/^application\/json/);
    for (const header of ['cache-control', 'access-control-allow-origin', 'vary']) {
      expect(metadata.response.headers.get(header), header).toBe(openid.response.headers.get(header));
    }
    expect(metadata.doc.issuer).toBe(api);
    const expected = Object.fromEntries(Object.entries(openid.doc).filter(([member]) => !isOpenIdOnly(member)));
    expect(metadata.doc).toEqual(expected);
    // The OpenID-only members, named (so the filter cannot quietly let them through).
    for (const member of [
      'userinfo_endpoint',
      'claims_supported',
      'claim_types_supported',
      'claims_parameter_supported',
      'subject_types_supported',
      'id_token_signing_alg_values_supported',
    ]) {
      expect(openid.doc).toHaveProperty(member);
      expect(metadata.doc).not.toHaveProperty(member);
    }
    // OAuth members stay, request_uri_parameter_supported included (absent would read as true).
    expect(metadata.doc).toMatchObject({
      request_uri_parameter_supported: false,
      request_parameter_supported: false,
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
    });
  });

  it('is what an OAuth 2.0 client library discovers in OAuth mode', async () => {
    const issuer = new URL(endpoints(server, environment).api);
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', [oauth.allowInsecureRequests]: true }),
    );
    expect(as.issuer).toBe(issuer.href.replace(/\/$/, ''));
    expect(as.token_endpoint).toBe(endpoints(server, environment).token);
    expect(as.authorization_endpoint).toBe(endpoints(server, environment).authorize);
    // RP-Initiated Logout registers end_session_endpoint as OAuth metadata too.
    expect(as.end_session_endpoint).toBe(endpoints(server, environment).endSession);
  });

  it('is not served on the dashboard host', async () => {
    const { dashboard } = endpoints(server, environment);
    expect((await fetch(`${dashboard}/.well-known/oauth-authorization-server`)).status).toBe(404);
    expect((await fetch(`${dashboard}/.well-known/openid-configuration`)).status).toBe(404);
  });
});

/**
 * docs/oauth.md, "What discovery says, per profile": one row per member, its value in the first
 * code span of the second column, URLs written against `<API URL>` and `<dashboard URL>`.
 */
function documentedDiscovery(): Map<string, string> {
  const text = fs.readFileSync(path.join(PROJECT_ROOT, 'docs', 'oauth.md'), 'utf8');
  const start = text.indexOf('### What discovery says, per profile');
  expect(start, 'docs/oauth.md has no "What discovery says, per profile" section').toBeGreaterThan(-1);
  const section = text.slice(start, text.indexOf('\n#', start + 1));
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    const member = /^`([a-z_]+)`$/.exec(cells[1] ?? '')?.[1];
    const value = /`([^`]+)`/.exec(cells[2] ?? '')?.[1];
    if (member && value) rows.set(member, value);
  }
  return rows;
}

describe('docs/oauth.md states what discovery says', () => {
  it('has a row for every member of the live production document, with the value it publishes', async () => {
    const { api, dashboard } = endpoints(server, 'production');
    const { doc } = await getDocument(api, '/.well-known/openid-configuration');
    const rows = documentedDiscovery();
    expect([...rows.keys()].sort()).toEqual(Object.keys(doc).sort());
    for (const [member, written] of rows) {
      const value = written.replace('<API URL>', api).replace('<dashboard URL>', dashboard);
      expect({ member, value: /^[[{"]|^(true|false)$/.test(value) ? JSON.parse(value) : value }).toEqual({ member, value: doc[member] });
    }
  });
});
