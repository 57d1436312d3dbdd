import crypto, { type webcrypto } from 'node:crypto';

type CryptoKeyPair = webcrypto.CryptoKeyPair;
import * as oauth from 'oauth4webapi';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { addFapi2Client } from '../../src/oidc/clients/service.js';
import { FormBrowser } from './browser.js';
import { discover, endpoints, walkHostedPages, type Env, type HostedPagesOptions } from './flow.js';
import type { OAuthTestServer } from './oauth-server.js';

/**
 * A bank-data (fapi2) client as an aggregator runs one, through oauth4webapi: its signing key
 * (private_key_jwt), its DPoP key, pushed authorization requests, and the hosted pages walked by
 * a form-submitting user agent.
 */

export const FAPI_REDIRECT: Record<Env, string> = {
  production: 'https://aggregator.example.org/callback',
  sandbox: 'http://127.0.0.1:9998/callback',
};

export interface FapiClient {
  environment: Env;
  client_id: string;
  /** Signs client assertions (ES256). */
  signingKey: CryptoKeyPair;
  /** Proves possession for DPoP (ES256). */
  dpopKey: CryptoKeyPair;
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  auth: oauth.ClientAuth;
  dpop: oauth.DPoPHandle;
  /** The scope its requests ask for by default (no openid for an organization-subject client: it gets no id_token). */
  scope: string;
}

export async function keyPair(alg: 'ES256' | 'PS256' | 'EdDSA' | 'RS256' = 'ES256'): Promise<CryptoKeyPair> {
  return (await generateKeyPair(alg, { extractable: true })) as CryptoKeyPair;
}

export async function publicJwk(pair: CryptoKeyPair, kid: string): Promise<Record<string, unknown>> {
  return { ...(await exportJWK(pair.publicKey)), kid, use: 'sig' };
}

/** Registers a fapi2 client with a fresh ES256 signing key, and a handle that speaks for it. */
export async function registerFapiClient(
  server: OAuthTestServer,
  options: {
    environment?: Env;
    name?: string;
    subjectType?: 'user' | 'organization';
    scopes?: string[];
    ipAllowList?: string[];
    signingKey?: CryptoKeyPair;
  } = {},
): Promise<FapiClient> {
  const environment = options.environment ?? 'production';
  const defaultScopes = [
    ...(options.subjectType === 'organization' ? [] : ['openid']),
    'offline_access',
    'read_only',
    'read:bank_accounts',
  ];
  const signingKey = options.signingKey ?? (await keyPair());
  const { client_id } = await addFapi2Client(
    { db: server.db, clientsFile: server.config.clients_file, passwordParams: MIN_PASSWORD_PARAMS, profile: server.config.profile },
    {
      environment,
      name: options.name ?? 'Aggregator',
      ...(options.subjectType ? { subjectType: options.subjectType } : {}),
      redirectUris: [FAPI_REDIRECT[environment]],
      scopes: options.scopes ?? defaultScopes,
      ipAllowList: options.ipAllowList ?? ['127.0.0.0/8'],
      jwks: { keys: [await publicJwk(signingKey, 'signing-1')] },
    },
  );
  const client: oauth.Client = { client_id, id_token_signed_response_alg: 'ES256' };
  const dpopKey = await keyPair();
  const scope = defaultScopes.join(' ');
  return {
    environment,
    client_id,
    signingKey,
    dpopKey,
    as: await discover(server, environment),
    client,
    auth: oauth.PrivateKeyJwt(signingKey.privateKey),
    dpop: oauth.DPoP(client, dpopKey),
    scope,
  };
}

export const insecure = { [oauth.allowInsecureRequests]: true } as const;

/**
 * The consent request a push for bank data carries unless the test names its own: every data
 * cluster of the accounts the approver ticks (approve() ticks all of them) and the organization's
 * contact, for 90 days. A fapi2 client must send one with an FDX scope (docs/bank-data.md, "Consents").
 */
export const DEFAULT_CONSENT_REQUEST = {
  durationType: 'TIME_BOUND',
  durationPeriod: 90,
  resources: [
    { resourceType: 'ACCOUNT', dataClusters: ['ACCOUNT_BASIC', 'ACCOUNT_DETAILED', 'TRANSACTIONS', 'STATEMENTS'] },
    { resourceType: 'CUSTOMER', dataClusters: ['CUSTOMER_CONTACT'] },
  ],
};

const asksForBankData = (scope: string) => scope.split(' ').some((s) => s === 'read:bank_accounts' || s === 'sync:connected_accounts');

/** Pushes an authorization request (with DEFAULT_CONSENT_REQUEST when it asks for bank data and names none); returns its request_uri and the PKCE verifier. */
export async function push(
  fapi: FapiClient,
  params: Record<string, string> = {},
): Promise<{ requestUri: string; verifier: string; state: string }> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const scope = params.scope ?? fapi.scope;
  const details: Record<string, string> =
    params.authorization_details === undefined && asksForBankData(scope)
      ? { authorization_details: JSON.stringify([{ type: 'fdx_v1.0', consentRequest: DEFAULT_CONSENT_REQUEST }]) }
      : {};
  const response = await oauth.pushedAuthorizationRequest(
    fapi.as,
    fapi.client,
    fapi.auth,
    {
      redirect_uri: FAPI_REDIRECT[fapi.environment],
      response_type: 'code',
      scope,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...details,
      ...params,
    },
    { DPoP: fapi.dpop, ...insecure },
  );
  const result = await oauth.processPushedAuthorizationResponse(fapi.as, fapi.client, response);
  return { requestUri: result.request_uri, verifier, state };
}

/** Every account the consent screen offers, ticked. */
export const tickEveryAccount = (html: string) =>
  Object.fromEntries([...html.matchAll(/name="(account_[0-9a-f-]{36})"/g)].map((m) => [m[1]!, 'on']));

/** Walks the hosted pages from the pushed request (ticking every offered account unless told otherwise); returns the callback's parameters. */
export async function approve(server: OAuthTestServer, fapi: FapiClient, requestUri: string, options: HostedPagesOptions): Promise<URL> {
  const url = new URL(endpoints(server, fapi.environment).authorize);
  url.searchParams.set('client_id', fapi.client_id);
  url.searchParams.set('request_uri', requestUri);
  const origin = new URL(FAPI_REDIRECT[fapi.environment]).origin;
  const browser = new FormBrowser((next) => next.origin === origin);
  const walk = { consentFields: tickEveryAccount, ...options, db: server.db };
  const { page } = await walkHostedPages(browser, await browser.request(url.toString()), walk);
  if (!page.location) throw new Error(`the flow did not come back to the client: ${page.status} ${page.html.slice(0, 300)}`);
  return page.location;
}

/** Exchanges the code with a DPoP proof; returns the token endpoint's processed response. */
export async function exchange(fapi: FapiClient, callback: URL, state: string, verifier: string) {
  const params = oauth.validateAuthResponse(fapi.as, fapi.client, callback, state);
  const send = () =>
    oauth.authorizationCodeGrantRequest(fapi.as, fapi.client, fapi.auth, params, FAPI_REDIRECT[fapi.environment], verifier, {
      DPoP: fapi.dpop,
      ...insecure,
    });
  let response = await send();
  // A first proof may be answered with a nonce to use (RFC 9449 8): oauth4webapi remembers it.
  if (
    response.status === 400 &&
    (
      (await response
        .clone()
        .json()
        .catch(() => ({}))) as { error?: string }
    ).error === 'use_dpop_nonce'
  )
    response = await send();
  return oauth.processAuthorizationCodeResponse(fapi.as, fapi.client, response, {
    requireIdToken: fapi.scope.split(' ').includes('openid'),
  });
}

/** PAR, sign-in and consent, code exchange: the tokens of a fresh authorization. */
export async function fapiTokens(
  server: OAuthTestServer,
  fapi: FapiClient,
  options: HostedPagesOptions & { params?: Record<string, string> },
) {
  const { requestUri, verifier, state } = await push(fapi, options.params);
  const callback = await approve(server, fapi, requestUri, options);
  return exchange(fapi, callback, state, verifier);
}

/** A client assertion made by hand (RFC 7523 3), so a test can get each claim wrong on purpose; undefined removes a claim. */
export async function clientAssertion(
  fapi: Pick<FapiClient, 'client_id' | 'as'>,
  key: CryptoKeyPair,
  overrides: Record<string, unknown> = {},
  alg = 'ES256',
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = {
    iss: fapi.client_id,
    sub: fapi.client_id,
    aud: fapi.as.issuer,
    jti: crypto.randomUUID(),
    iat: now,
    exp: now + 60,
    ...overrides,
  };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
  return new SignJWT(claims).setProtectedHeader({ alg }).sign(key.privateKey);
}

export const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
